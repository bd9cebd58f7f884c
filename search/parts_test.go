package search

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"sort"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
)

func only(scopes ...string) func(string) bool {
	return func(s string) bool {
		for _, x := range scopes {
			if s == x {
				return true
			}
		}
		return false
	}
}

// explainOf searches q as a reader of the given scopes and returns the
// breakdown of each hit by id.
func explainOf(t *testing.T, ix *Index, text string, readable func(string) bool) map[string]Explain {
	t.Helper()
	res := search(t, ix, Query{Text: text, Limit: 50, Explain: true, Readable: readable})
	out := make(map[string]Explain, len(res))
	for _, r := range res {
		out[r.Doc.ID] = *r.Explain
	}
	return out
}

// What a reader sees is computed over the scopes it may read: docs stored
// in other scopes change neither the BM25 statistics, nor vector ranks,
// nor the mean vector, nor the length prior, nor the hits.
func TestParts_StatsIgnoreUnreadableScopes(t *testing.T) {
	ix := openTest(t, Options{})
	mustIndex(t, ix,
		Doc{ID: "pub1", Scope: "public", Text: "the walrus migration starts in spring"},
		Doc{ID: "pub2", Scope: "public", Text: "group planning for the spring trip"},
		Doc{ID: "chat1", Scope: "public", Kind: 9, Group: "open", Text: "walrus sighting near the pier this morning, huge one"},
	)
	reader := only("public")
	before := explainOf(t, ix, "walrus spring", reader)
	if len(before) == 0 {
		t.Fatal("no hits before")
	}
	var secret []Doc
	for i := range 20 {
		secret = append(secret,
			Doc{ID: fmt.Sprint("priv", i), Scope: "private:alice", Volatile: true, Text: "walrus walrus secret diary entry"},
			Doc{ID: fmt.Sprint("grp", i), Scope: "group:hidden", Kind: 9, Group: "open", Text: "walrus"},
		)
	}
	mustIndex(t, ix, secret...)
	after := explainOf(t, ix, "walrus spring", reader)
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("a public reader's breakdown moved when unreadable docs were stored:\nbefore %+v\nafter  %+v", before, after)
	}
	all := explainOf(t, ix, "walrus spring", nil)
	if reflect.DeepEqual(all["pub1"], before["pub1"]) {
		t.Fatal("a reader of every scope sees the same score: the test proves nothing")
	}
	if _, ok := all["priv0"]; !ok {
		t.Fatal("a reader of every scope does not find the private docs")
	}
	alice := explainOf(t, ix, "walrus spring", only("public", "private:alice"))
	if _, ok := alice["priv0"]; !ok || reflect.DeepEqual(alice["pub1"], before["pub1"]) {
		t.Fatalf("alice's view does not include her scope: %+v", alice)
	}
	if _, ok := alice["grp0"]; ok {
		t.Fatal("alice sees a scope she may not read")
	}
	if n := ix.CountReadable(reader); n != 3 {
		t.Fatalf("CountReadable(public) = %d, want 3", n)
	}
}

func TestParts_ConflictsOnlyAmongReadable(t *testing.T) {
	ix := openTest(t, Options{})
	mustIndex(t, ix,
		Doc{ID: "m", Scope: "public", Source: "mallory", Topic: "ops/port", Text: "port 80"},
		Doc{ID: "b", Scope: "public", Source: "bob", Topic: "ops/port", Text: "port 80"},
		Doc{ID: "a", Scope: "private:alice", Source: "alice", Topic: "ops/port", Text: "port 8443", Volatile: true},
	)
	cs, err := ix.Conflicts("", only("public"), nil)
	if err != nil || len(cs) != 0 {
		t.Fatalf("public reader sees conflicts %+v (%v): made by a doc it cannot read", cs, err)
	}
	cs, err = ix.Conflicts("", nil, nil)
	if err != nil || len(cs) != 1 || len(cs[0].Docs) != 3 {
		t.Fatalf("reader of all: %+v %v", cs, err)
	}
}

func TestParts_RemoveRestoresStats(t *testing.T) {
	ix := openTest(t, Options{})
	mustIndex(t, ix, memDocs()...)
	before := explainOf(t, ix, "badger store", nil)
	mustIndex(t, ix, Doc{ID: "x", Scope: "other", Text: "badger badger store"})
	mustIndex(t, ix, Doc{ID: "x", Scope: "other", Text: "badger store again, replaced"})
	if err := ix.Remove(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	if after := explainOf(t, ix, "badger store", nil); !reflect.DeepEqual(before, after) {
		t.Fatalf("stats after add+replace+remove differ:\n%+v\n%+v", before, after)
	}
	if len(ix.st.parts.byScope) != 1 {
		t.Fatalf("empty part kept: %v", ix.st.parts.byScope)
	}
}

// The keyword scores are bleve's BM25 (which the ranking was tuned with),
// now computed by us: same corpus, same scores to float32 precision (bleve
// stores the length norm as a float32).
func TestParts_BM25MatchesBleve(t *testing.T) {
	docs := memDocs()
	docs = append(docs,
		Doc{ID: "f", Text: "badger badger badger, the store of events, badger again"},
		Doc{ID: "g", Text: "a store"},
	)
	ix := openTest(t, Options{})
	mustIndex(t, ix, docs...)

	oldB, oldK := bsearch.BM25_b, bsearch.BM25_k1
	bsearch.BM25_b, bsearch.BM25_k1 = bm25B, bm25K1
	defer func() { bsearch.BM25_b, bsearch.BM25_k1 = oldB, oldK }()
	fm := mapping.NewTextFieldMapping()
	fm.Analyzer = analyzerName
	dm := mapping.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt("text", fm)
	m := mapping.NewIndexMapping()
	m.DefaultMapping = dm
	m.ScoringModel = index.BM25Scoring
	bx, err := bleve.NewUsing("", m, scorch.Name, scorch.Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bx.Close()
	b := bx.NewBatch()
	for i := range docs {
		if err := b.Index(docs[i].ID, map[string]string{"text": indexedText(&docs[i])}); err != nil {
			t.Fatal(err)
		}
	}
	if err := bx.Batch(b); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"badger", "badger store", "store store events german", "group chat indexed short"} {
		terms := ix.queryTerms(text)
		var qs []query.Query
		for _, wt := range terms {
			tq := query.NewTermQuery(wt.Term)
			tq.SetField("text")
			tq.SetBoost(wt.Weight)
			qs = append(qs, tq)
		}
		req := bleve.NewSearchRequestOptions(query.NewDisjunctionQuery(qs), 50, 0, false)
		res, err := bx.Search(req)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]float64{}
		for _, h := range res.Hits {
			want[h.ID] = h.Score
		}
		ix.mu.RLock()
		got := ix.st.parts.view(nil, ix.st.docs).searchText(terms, 50)
		ix.mu.RUnlock()
		if len(got) != len(want) {
			t.Fatalf("%q: %d hits, bleve %d", text, len(got), len(want))
		}
		ids := make([]string, 0, len(got))
		for _, h := range got {
			ids = append(ids, h.ID)
			if w := want[h.ID]; math.Abs(h.Score-w) > 1e-5*math.Max(1, w) {
				t.Errorf("%q: %s scores %v, bleve %v", text, h.ID, h.Score, w)
			}
		}
		if !sort.SliceIsSorted(got, func(i, j int) bool { return got[i].Score > got[j].Score }) {
			t.Errorf("%q: hits not in score order: %v", text, ids)
		}
	}
}

// BenchmarkSearchScoped: what reading per scope costs. 20k docs over 2,001
// scopes (half public, the rest in 1,000 groups and 1,000 people's private
// scopes); the reader reads the public scope and 1 in 10 of the others.
//
//	go test ./search/ -run='^$' -bench=SearchScoped
func BenchmarkSearchScoped(b *testing.B) {
	ix, err := Open(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	words := []string{"walrus", "harbour", "deploy", "friday", "launch", "otter", "port", "crane", "diary", "plans"}
	var docs []Doc
	for i := range 20_000 {
		scope := "public"
		if i%2 == 1 {
			scope = fmt.Sprintf("s%d", i%2000)
		}
		docs = append(docs, Doc{ID: fmt.Sprint("d", i), Scope: scope,
			Text: fmt.Sprintf("%s %s note %d about the %s", words[i%10], words[(i/10)%10], i, words[(i/100)%10])})
	}
	if err := ix.Index(context.Background(), docs...); err != nil {
		b.Fatal(err)
	}
	readable := func(s string) bool {
		if s == "public" {
			return true
		}
		var n int
		fmt.Sscanf(s, "s%d", &n)
		return n%10 == 1
	}
	for _, tc := range []struct {
		name string
		r    func(string) bool
	}{{"all", nil}, {"reader", readable}} {
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				q := words[i%10] + " " + words[(i+3)%10]
				if _, err := ix.Search(context.Background(), Query{Text: q, Limit: 10, Readable: tc.r}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A reader who may read every part gets no per-doc filter (so the vector
// graph may be walked); one part it may not read and every doc is checked.
func TestParts_ReaderOfEveryPartIsUnfiltered(t *testing.T) {
	ix := openTest(t, Options{})
	mustIndex(t, ix, Doc{ID: "p", Scope: "public", Text: "walrus"}, Doc{ID: "g", Scope: "group:a", Text: "walrus"})
	cases := []struct {
		readable func(string) bool
		all      bool
	}{
		{nil, true},
		{only("public", "group:a"), true},
		{only("public", "group:a", "group:b"), true},
		{only("public"), false},
	}
	for i, c := range cases {
		ix.mu.RLock()
		v := ix.st.parts.view(c.readable, ix.st.docs)
		ix.mu.RUnlock()
		if v.all != c.all || (v.accept() == nil) != c.all {
			t.Errorf("case %d: all=%v accept nil=%v, want %v", i, v.all, v.accept() == nil, c.all)
		}
		if !c.all && v.has("g") {
			t.Errorf("case %d: the unreadable doc passes", i)
		}
	}
}
