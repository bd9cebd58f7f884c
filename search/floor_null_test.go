package search

import (
	"context"
	"fmt"
	"testing"

	"github.com/snowclaw/snowclaw/search/glove"
)

// A corpus of one kind of note with a few memories about something else.
func nullCorpus() []Doc {
	var docs []Doc
	cities := []string{"Porto", "Graz", "Bergen", "Leipzig", "Tunis", "Quito", "Omaha", "Riga"}
	parts := []string{"database", "cache", "queue", "gateway", "scheduler", "load balancer"}
	for i := range 400 {
		docs = append(docs, Doc{ID: fmt.Sprintf("n%03d", i), Kind: 30078, CreatedAt: int64(1000 + i),
			Text: fmt.Sprintf("The %s %s in %s was upgraded to version %d.%d", parts[i%len(parts)], []string{"primary", "replica", "backup"}[i%3], cities[i%len(cities)], i%9+1, i%17)})
	}
	docs = append(docs,
		Doc{ID: "kitten", Kind: 30078, CreatedAt: 5000, Text: "Their kitten is named Whiskers"},
		Doc{ID: "violin", Kind: 30078, CreatedAt: 5001, Text: "Lily practises the violin every evening"},
	)
	return docs
}

// TestFloor_NullCalibratedMeaning: with an embedder that says what a
// query about nothing is (NullQuerier), the floor is calibrated on such
// queries, a memory found by meaning alone passes it (floor "vector"),
// Match agrees, and a query of unknown words gets nothing.
func TestFloor_NullCalibratedMeaning(t *testing.T) {
	ix := openTest(t, Options{Embedder: glove.New(), BM25Weight: 1, VectorWeight: 0.25})
	if _, ok := ix.emb.(NullQuerier); !ok {
		t.Fatal("the glove embedder is no NullQuerier")
	}
	docs := nullCorpus()
	mustIndex(t, ix, docs...)
	floor := ix.VectorFloor()
	if floor == builtinFloor || floor <= 0 || floor >= 1 {
		t.Fatalf("floor %v: not calibrated", floor)
	}
	ctx := context.Background()
	for q, want := range map[string]string{"what is the cat called": "kitten", "what instrument does she play": "violin"} {
		res := search(t, ix, Query{Text: q, Limit: 10, Explain: true})
		i := indexOf(res, want)
		if i < 0 {
			t.Errorf("%q: %s not found (floor %.3f): %v", q, want, floor, ids(res))
			continue
		}
		if f := res[i].Explain.Floor; f != FloorVector {
			t.Errorf("%q: %s passed as %q, want %q", q, want, f, FloorVector)
		}
		for _, d := range docs {
			if d.ID != want {
				continue
			}
			if f, ok, err := ix.Match(ctx, q, d); err != nil || !ok || f != FloorVector {
				t.Errorf("Match(%q, %s) = %q %v %v, want %q", q, want, f, ok, err, FloorVector)
			}
		}
	}
	// the test can fail: with the vector side off the same queries find nothing
	off := openTest(t, Options{Embedder: glove.New(), BM25Weight: 1})
	mustIndex(t, off, docs...)
	if res := search(t, off, Query{Text: "what is the cat called"}); len(res) != 0 {
		t.Errorf("BM25 alone found %v", ids(res))
	}
	for _, q := range []string{"zzzqqq", "qwxv plorth zzyzx"} {
		if res := search(t, ix, Query{Text: q}); len(res) != 0 {
			t.Errorf("%q found %v", q, ids(res))
		}
	}
}

// A doc barely alike the query uncentred does not pass, however the
// centring moved it (minCosine).
func TestFloor_CentredNeedsPlainCosine(t *testing.T) {
	ix := openTest(t, Options{Embedder: glove.New()})
	if ix.passesVector(minCosine-0.01, 0.99, 0.2) {
		t.Error("passed under minCosine")
	}
	if !ix.passesVector(minCosine, 0.21, 0.2) {
		t.Error("did not pass at minCosine above the floor")
	}
	h := openTest(t, Options{})
	if !h.passesVector(0.5, 0, 0.45) || h.passesVector(0.44, 1, 0.45) {
		t.Error("the hash embedder's floor is not the plain cosine")
	}
}

// Search and Match agree doc by doc under the centred floor too.
func TestFloor_NullSearchAndMatchAgree(t *testing.T) {
	ix := openTest(t, Options{Embedder: glove.New(), BM25Weight: 1, VectorWeight: 0.25})
	docs := append(nullCorpus(), memDocs()...)
	mustIndex(t, ix, docs...)
	ctx := context.Background()
	for _, q := range []string{"what is the cat called", "what instrument does she play", "database upgrade", "zzzqqq", "music lessons", "storage engine"} {
		res := search(t, ix, Query{Text: q, Limit: 1000, Explain: true})
		got := map[string]string{}
		for _, r := range res {
			got[r.Doc.ID] = r.Explain.Floor
		}
		for _, d := range docs {
			floor, ok, err := ix.Match(ctx, q, d)
			if err != nil {
				t.Fatal(err)
			}
			// a context pass (a thread or session neighbour) is search's alone
			if f, found := got[d.ID]; f != FloorContext && (found != ok || ok && f != floor) {
				t.Errorf("%q on %s: search says %v (%q), Match says %v (%q)", q, d.ID, found, f, ok, floor)
			}
		}
	}
}
