package locomo

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/snowclaw/snowclaw/search"
)

// TestEval_LoCoMo prints the retrieval metric (recall@5/10, NDCG@10) for
// BM25 alone and for the hybrid ranking. It needs the data file:
//
//	SNOWCLAW_LOCOMO=/path/to/locomo10.json go test -run Eval -v ./internal/eval/locomo/
func TestEval_LoCoMo(t *testing.T) {
	convs := loadOrSkip(t)
	dir := func(id string) string { return t.TempDir() }
	for _, tc := range []struct {
		name string
		opts search.Options
	}{
		{"bm25", search.Options{BM25Weight: 1, VectorWeight: 0}},
		{"hybrid (default weights 1/1, k 60)", search.Options{}},
		{"hybrid (vector weight 0.25, k 10)", search.Options{BM25Weight: 1, VectorWeight: 0.25, RRFK: 10}},
	} {
		s, err := Evaluate(context.Background(), convs, tc.opts, dir)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		s.Write(&b, tc.name)
		t.Log("\n" + b.String())
	}
}

// loadOrSkip reads the LoCoMo file SNOWCLAW_LOCOMO names, and skips the
// test when it names none (the data's licence keeps it out of the repo).
func loadOrSkip(t *testing.T) []Conversation {
	t.Helper()
	path := os.Getenv("SNOWCLAW_LOCOMO")
	if path == "" {
		t.Skip("set SNOWCLAW_LOCOMO to a LoCoMo JSON file")
	}
	convs, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return convs
}
