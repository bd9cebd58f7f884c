package paraphrase_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/snowclaw/snowclaw/search"
	"github.com/snowclaw/snowclaw/search/paraphrase"
)

func TestPairs_Written(t *testing.T) {
	ps := paraphrase.Pairs()
	if len(ps) < 100 {
		t.Fatalf("%d pairs, want at least 100", len(ps))
	}
	seen := map[string]bool{}
	for _, p := range ps {
		if p.Query == "" || p.Memory == "" || seen[p.Query] || seen[p.Memory] {
			t.Errorf("empty or repeated: %q | %q", p.Query, p.Memory)
		}
		seen[p.Query], seen[p.Memory] = true, true
	}
}

// No query shares a term with its memory as the index analyses them: the
// relevance floor's keyword side (search.Index.Match with the vector side
// off) passes none.
func TestPairs_ShareNoTerm(t *testing.T) {
	ix, err := search.Open(search.Options{BM25Weight: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for i, p := range paraphrase.Pairs() {
		d := memoryDoc(fmt.Sprintf("m%d", i), p.Memory, 0)
		floor, ok, err := ix.Match(context.Background(), p.Query, d)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			t.Errorf("%q shares a term with %q (floor %s)", p.Query, p.Memory, floor)
		}
		// and the test can fail: the query matches its own words
		if _, ok, _ := ix.Match(context.Background(), p.Query, memoryDoc("q", p.Query, 0)); !ok {
			t.Errorf("%q does not match itself", p.Query)
		}
	}
}

func TestDistractors_DistinctAndSeeded(t *testing.T) {
	a, b, c := paraphrase.Distractors(6000, 1), paraphrase.Distractors(6000, 1), paraphrase.Distractors(6000, 2)
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatal("the same seed gave other distractors")
	}
	if strings.Join(a, "\n") == strings.Join(c, "\n") {
		t.Fatal("another seed gave the same distractors")
	}
	seen := map[string]bool{}
	for _, p := range paraphrase.Pairs() {
		seen[p.Memory] = true
	}
	for _, d := range a {
		if seen[d] {
			t.Fatalf("%q twice, or a pair's memory", d)
		}
		seen[d] = true
	}
}

func memoryDoc(id, text string, at int64) search.Doc {
	return search.Doc{ID: id, Kind: 30078, Pubkey: "author", Source: "author", CreatedAt: at,
		D: "snow:memory:" + id, Topic: id, Text: text + "\n" + id, Tier: "public", Scope: "public"}
}

// recallInProcess indexes the distractors and the pairs' memories in one
// RAM index with opts and returns how many queries find their memory in
// the first 10, and the ranks (0 = missing).
func recallInProcess(t *testing.T, opts search.Options, distractors int) (int, []int) {
	t.Helper()
	ctx := context.Background()
	ix, err := search.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ps := paraphrase.Pairs()
	var docs []search.Doc
	for i, d := range paraphrase.Distractors(distractors, 7) {
		docs = append(docs, memoryDoc(fmt.Sprintf("d%05d", i), d, int64(1e9+3600*i)))
	}
	for i, p := range ps {
		docs = append(docs, memoryDoc(fmt.Sprintf("p%03d", i), p.Memory, int64(1e9+3600*(i*43%distractors))))
	}
	if err := ix.Index(ctx, docs...); err != nil {
		t.Fatal(err)
	}
	found := 0
	ranks := make([]int, len(ps))
	for i, p := range ps {
		res, err := ix.Search(ctx, search.Query{Text: p.Query, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for r, x := range res {
			if x.Doc.ID == fmt.Sprintf("p%03d", i) {
				found++
				ranks[i] = r + 1
			}
		}
	}
	return found, ranks
}

// TestRecall_ByMeaning: the semantic embedder finds memories that share
// no word with their query, among 5,000 others, where BM25 alone finds
// none (in-process; `snowclaw eval paraphrase` is the same through a
// relay). It measured 67 of 114 (58.8%) here; it fails under half, so a
// change that loses the meaning matches shows. The target was 70%, not
// reached (docs/search-tuning.md).
func TestRecall_ByMeaning(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes 5,000 memories: go test -run Recall ./search/paraphrase/")
	}
	n := 5000
	bm25, _ := recallInProcess(t, search.Options{BM25Weight: 1, VectorWeight: 0, RRFK: 10}, n)
	full, ranks := recallInProcess(t, search.Options{BM25Weight: 1, VectorWeight: 0.25, RRFK: 10, Embedder: search.NewGloveEmbedder()}, n)
	ps := paraphrase.Pairs()
	t.Logf("recall@10 among %d: BM25 alone %d of %d, full %d of %d", n, bm25, len(ps), full, len(ps))
	if os.Getenv("SNOWCLAW_PARAPHRASE_MISSES") != "" {
		var miss []string
		for i, r := range ranks {
			if r == 0 {
				miss = append(miss, ps[i].Query+" | "+ps[i].Memory)
			}
		}
		sort.Strings(miss)
		t.Logf("missed:\n%s", strings.Join(miss, "\n"))
	}
	if bm25 != 0 {
		t.Errorf("BM25 alone found %d: a pair shares a word after all", bm25)
	}
	if 2*full < len(ps) {
		t.Errorf("recall@10 %d of %d, under 50%%", full, len(ps))
	}
}
