package search

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestSearch_Relevance(t *testing.T) {
	ix := openTest(t, Options{})
	mustIndex(t, ix, memDocs()...)
	for _, tc := range []struct {
		query, want string
	}{
		{"which store does the relay use", "a"},
		{"NIP-42 authentication reading", "b"},
		{"what language does alice prefer", "c"},
		{"rust errors", "e"},
		{"indexing short chat messages", "d"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			res := search(t, ix, Query{Text: tc.query, Limit: 3})
			if len(res) == 0 || res[0].Doc.ID != tc.want {
				t.Fatalf("top = %v, want %s first", ids(res), tc.want)
			}
		})
	}
}

func TestSearch_BM25OnlyAndVectorOnly(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"bm25", Options{BM25Weight: 1}},
		{"vector", Options{VectorWeight: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := openTest(t, tc.opts)
			mustIndex(t, ix, memDocs()...)
			res := search(t, ix, Query{Text: "badger event store", Limit: 2, Explain: true})
			if len(res) == 0 || res[0].Doc.ID != "a" {
				t.Fatalf("top = %v, want a", ids(res))
			}
		})
	}
}

func TestSearch_TopicWordsAreSearchable(t *testing.T) {
	ix := openTest(t, Options{})
	mustIndex(t, ix, Doc{ID: "x", Text: "use tabs", Topic: "project/gofmt/style", Tags: map[string][]string{"t": {"formatting"}}})
	mustIndex(t, ix, memDocs()...)
	for _, q := range []string{"gofmt", "formatting"} {
		if res := search(t, ix, Query{Text: q, Limit: 1}); len(res) != 1 || res[0].Doc.ID != "x" {
			t.Errorf("%s: got %v", q, ids(res))
		}
	}
}

func TestSearch_Superseded(t *testing.T) {
	ix := openTest(t, Options{})
	mustIndex(t, ix,
		Doc{ID: "v1", Text: "the deploy target is fly.io", Topic: "project/x/deploy", CreatedAt: 1},
		Doc{ID: "v2", Text: "the deploy target is hetzner", Topic: "project/x/deploy", CreatedAt: 2, Supersedes: []string{"v1"}},
		Doc{ID: "r1", Text: "deploy notes old", Kind: 30078, Pubkey: "pk", D: "notes", CreatedAt: 5},
		Doc{ID: "r2", Text: "deploy notes new", Kind: 30078, Pubkey: "pk", D: "notes", CreatedAt: 6},
	)
	for _, tc := range []struct {
		name    string
		include bool
		want    map[string]bool
	}{
		{"hidden", false, map[string]bool{"v2": true, "r2": true}},
		{"included", true, map[string]bool{"v1": true, "v2": true, "r1": true, "r2": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := search(t, ix, Query{Text: "deploy", IncludeSuperseded: tc.include})
			got := map[string]bool{}
			for _, r := range res {
				got[r.Doc.ID] = true
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", ids(res), tc.want)
			}
			for id := range tc.want {
				if !got[id] {
					t.Fatalf("got %v, want %v", ids(res), tc.want)
				}
			}
		})
	}
	// Removing the successor brings the old version back.
	if err := ix.Remove(context.Background(), "v2"); err != nil {
		t.Fatal(err)
	}
	if res := search(t, ix, Query{Text: "deploy target"}); indexOf(res, "v1") < 0 {
		t.Fatalf("v1 not visible after its successor was removed: %v", ids(res))
	}
}

func TestSearch_Trust(t *testing.T) {
	const trusted, stranger = "aa", "bb"
	docs := []Doc{
		// The stranger's doc matches the query far better.
		{ID: "strong", Source: stranger, Text: "postgres connection pool size tuning for postgres: pool size 20"},
		{ID: "weak", Source: trusted, Text: "the connection pool is fine"},
	}
	for _, tc := range []struct {
		name  string
		opts  Options
		first string
	}{
		{"no trust list", Options{}, "strong"},
		{"trusted source", Options{Sources: map[string]float64{trusted: 1, stranger: 0.2}}, "weak"},
		{"trusted group", Options{Sources: map[string]float64{"group:core": 1}, DefaultTrust: 0.2}, "weak"},
		{"model tier", Options{ModelTiers: []ModelTier{{Pattern: "meta/llama-*", Weight: 0.2}}}, "weak"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := openTest(t, tc.opts)
			ds := append([]Doc(nil), docs...)
			ds[0].Model = "meta/llama-3-8b"
			ds[1].Group = "core"
			ds[1].Model = "anthropic/claude-opus-4-6"
			mustIndex(t, ix, ds...)
			res := search(t, ix, Query{Text: "postgres connection pool size", Explain: true})
			if len(res) != 2 || res[0].Doc.ID != tc.first {
				t.Fatalf("order %v, want %s first", ids(res), tc.first)
			}
		})
	}
}

func TestSearch_Explain(t *testing.T) {
	ix := openTest(t, Options{Sources: map[string]float64{"s1": 0.8}, RecencyHalfLife: time.Hour})
	mustIndex(t, ix, Doc{ID: "a", Source: "s1", Text: "badger store", Confidence: 1, CreatedAt: time.Now().Unix() - 3600})
	res := search(t, ix, Query{Text: "badger store", Explain: true})
	if len(res) != 1 || res[0].Explain == nil {
		t.Fatalf("no explain: %+v", res)
	}
	ex := res[0].Explain
	if ex.BM25Rank != 1 || ex.BM25Score <= 0 || ex.VectorRank != 1 || ex.VectorScore <= 0 {
		t.Errorf("ranks/scores not filled: %+v", ex)
	}
	if ex.Fused <= 0 || ex.Trust != 0.8 || ex.Confidence != 1 || ex.Recency <= 0 || ex.Recency >= 1 {
		t.Errorf("factors: %+v", ex)
	}
	if want := ex.Fused * ex.Trust * ex.Confidence * ex.Recency; ex.Final != want || res[0].Score != want {
		t.Errorf("final %v, score %v, want %v", ex.Final, res[0].Score, want)
	}
	if res := search(t, ix, Query{Text: "badger"}); res[0].Explain != nil {
		t.Error("explain set without Query.Explain")
	}
}

func TestSearch_AcceptBeforeLimit(t *testing.T) {
	ix := openTest(t, Options{})
	var docs []Doc
	for i := 0; i < 500; i++ {
		id := string(rune('a'+i%26)) + strings.Repeat("x", i/26) + "-" + itoa(i)
		docs = append(docs, Doc{ID: id, Text: "shared words about memory " + itoa(i), Group: map[bool]string{true: "keep", false: "drop"}[i%50 == 0]})
	}
	mustIndex(t, ix, docs...)
	res := search(t, ix, Query{Text: "memory", Limit: 5, Accept: func(d Doc) bool { return d.Group == "keep" }})
	if len(res) != 5 {
		t.Fatalf("got %d results, want 5 (accept filter must run before the limit)", len(res))
	}
	for _, r := range res {
		if r.Doc.Group != "keep" {
			t.Fatalf("rejected doc returned: %s", r.Doc.ID)
		}
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

func TestSearch_EmptyText(t *testing.T) {
	ix := openTest(t, Options{})
	mustIndex(t, ix, memDocs()...)
	res := search(t, ix, Query{Limit: 2})
	if len(res) != 2 || res[0].Doc.ID != "e" {
		t.Fatalf("browse order %v, want newest first", ids(res))
	}
	if res := search(t, ix, Query{Text: "the and of"}); len(res) != 0 {
		t.Fatalf("stop words only: got %v", ids(res))
	}
}

func TestSearch_NeighbourContext(t *testing.T) {
	ix := openTest(t, Options{})
	chat := []Doc{
		{ID: "m1", Kind: 9, Group: "g", CreatedAt: 1, Text: "anna: what are you reading these days?"},
		{ID: "m2", Kind: 9, Group: "g", CreatedAt: 2, Text: "ben: Dune, for the third time"},
		{ID: "m3", Kind: 9, Group: "g", CreatedAt: 3, Text: "anna: nice, I liked the desert ecology"},
		{ID: "x1", Kind: 9, Group: "h", CreatedAt: 2, Text: "carl: the weather is bad"},
	}
	mustIndex(t, ix, chat...)
	res := search(t, ix, Query{Text: "what is ben reading", Limit: 3, Explain: true})
	if indexOf(res, "m2") < 0 {
		t.Fatalf("the reply that names the book was not found: %v", ids(res))
	}
	if indexOf(res, "x1") >= 0 {
		t.Fatalf("a message of another group borrowed context: %v", ids(res))
	}
}

func TestIndex_Remove(t *testing.T) {
	ix := openTest(t, Options{})
	mustIndex(t, ix, memDocs()...)
	mustIndex(t, ix, Doc{ID: "v", Text: "volatile badger secret", Volatile: true})
	if err := ix.Remove(context.Background(), "a", "v", "unknown"); err != nil {
		t.Fatal(err)
	}
	if ix.Count() != 4 {
		t.Fatalf("count %d, want 4", ix.Count())
	}
	if _, ok, _ := ix.Get("a"); ok {
		t.Fatal("a still there")
	}
	if res := search(t, ix, Query{Text: "badger"}); indexOf(res, "a") >= 0 || indexOf(res, "v") >= 0 {
		t.Fatalf("removed docs found: %v", ids(res))
	}
}

func TestIndex_ReplaceAndVolatility(t *testing.T) {
	ix := openTest(t, Options{})
	mustIndex(t, ix, Doc{ID: "a", Text: "first text about llamas"})
	mustIndex(t, ix, Doc{ID: "a", Text: "second text about alpacas", Volatile: true})
	if res := search(t, ix, Query{Text: "llamas"}); len(res) != 0 {
		t.Fatalf("old text still found: %v", ids(res))
	}
	if res := search(t, ix, Query{Text: "alpacas"}); len(res) != 1 {
		t.Fatalf("new text not found: %v", ids(res))
	}
	mustIndex(t, ix, Doc{ID: "a", Text: "third text about vicunas"})
	if res := search(t, ix, Query{Text: "alpacas"}); len(res) != 0 {
		t.Fatalf("volatile text still found: %v", ids(res))
	}
	if ix.Count() != 1 {
		t.Fatalf("count %d", ix.Count())
	}
}
