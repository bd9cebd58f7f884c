package search

import (
	"context"
	"testing"
)

// countingEmbedder wraps the built-in embedder and counts texts embedded.
type countingEmbedder struct {
	Embedder
	n int
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.n += len(texts)
	return c.Embedder.Embed(ctx, texts)
}

func TestIndex_KeywordOnlyDocsGetNoVector(t *testing.T) {
	dir := t.TempDir()
	emb := &countingEmbedder{Embedder: NewBuiltinEmbedder()}
	ix := openTest(t, Options{Dir: dir, Embedder: emb})
	mustIndex(t, ix,
		Doc{ID: "short", Kind: 9, Text: "pizza tonight?", KeywordOnly: true},
		Doc{ID: "long", Kind: 9, Text: "we decided the release goes out on friday after the review"},
	)
	if emb.n != 1 {
		t.Fatalf("embedded %d texts, want 1 (the keyword-only doc must not be embedded)", emb.n)
	}
	if got := ids(search(t, ix, Query{Text: "pizza", Limit: 5})); len(got) == 0 || got[0] != "short" {
		t.Fatalf("keyword search for the keyword-only doc: %v", got)
	}
	// a vector-only search cannot reach it, and reopening keeps it
	ix.Close()
	ix2 := openTest(t, Options{Dir: dir, Embedder: emb, BM25Weight: 0, VectorWeight: 1})
	if _, ok, _ := ix2.Get("short"); !ok {
		t.Fatal("keyword-only doc lost on reopen")
	}
	for _, id := range ids(search(t, ix2, Query{Text: "pizza tonight", Limit: 5})) {
		if id == "short" {
			t.Fatal("keyword-only doc found through vectors")
		}
	}
}
