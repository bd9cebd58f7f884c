package search

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/nbd-wtf/go-nostr/nip19"
)

// Two sources as hex keys, and A's npub, as the owner would list it.
var (
	srcA = strings.Repeat("a", 64)
	srcB = strings.Repeat("b", 64)
	srcC = strings.Repeat("c", 64)
)

func prefWeights(list ...string) map[string]float64 {
	m := make(map[string]float64, len(list))
	for i, s := range list {
		m[s] = PreferenceWeight(i, len(list), 1)
	}
	return m
}

func TestPreferenceWeight_Cases(t *testing.T) {
	for _, tc := range []struct {
		name       string
		i, n       int
		def, want  float64
		aboveOther float64 // the weight of the next rank, which must be lower
	}{
		{"head of one", 0, 1, 1, 1.5, 1},
		{"head of two", 0, 2, 1, 1.5, 1.25},
		{"tail of two", 1, 2, 1, 1.25, 1},
		{"scaled by default", 0, 2, 0.5, 0.75, 0.625},
		{"out of range is default", 5, 2, 0.8, 0.8, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := PreferenceWeight(tc.i, tc.n, tc.def)
			if math.Abs(got-tc.want) > 1e-9 {
				t.Fatalf("PreferenceWeight(%d,%d,%v) = %v, want %v", tc.i, tc.n, tc.def, got, tc.want)
			}
			if got <= tc.aboveOther && tc.i < tc.n {
				t.Fatalf("rank %d weighs %v, not above the next (%v)", tc.i, got, tc.aboveOther)
			}
		})
	}
}

// TestSetSources_ReorderFlipsEqualResults: two docs that match a query
// equally swap places when the owner swaps their sources in the list, in
// search and in the conflict order alike.
func TestSetSources_ReorderFlipsEqualResults(t *testing.T) {
	ix := openTest(t, Options{})
	mustIndex(t, ix,
		Doc{ID: "fromA", Kind: 30078, Source: srcA, Topic: "ops/deploy", Text: "deploy day is tuesday for the release train", CreatedAt: 100},
		Doc{ID: "fromB", Kind: 30078, Source: srcB, Topic: "ops/deploy", Text: "deploy day is friday for the release train", CreatedAt: 100},
	)
	q := Query{Text: "deploy day release train"}
	order := func() (string, string) {
		res := search(t, ix, q)
		cs, _ := ix.Conflicts("ops/deploy", nil, nil)
		if len(res) != 2 || len(cs) != 1 || len(cs[0].Docs) != 2 {
			t.Fatalf("results %v conflicts %+v", ids(res), cs)
		}
		return res[0].Doc.ID, cs[0].Docs[0].ID
	}
	npubA, _ := nip19.EncodePublicKey(srcA)
	for _, step := range []struct {
		name string
		list []string
		want string
	}{
		{"A first (as npub)", []string{npubA, srcB}, "fromA"},
		{"B first", []string{srcB, srcA}, "fromB"},
		{"A first again", []string{srcA, srcB}, "fromA"},
	} {
		if err := ix.SetSources(prefWeights(step.list...)); err != nil {
			t.Fatal(err)
		}
		if top, conflictTop := order(); top != step.want || conflictTop != step.want {
			t.Fatalf("%s: search top %s, conflict top %s, want %s", step.name, top, conflictTop, step.want)
		}
	}
}

func TestSetSources_FileWeightsStay(t *testing.T) {
	ix := openTest(t, Options{Sources: map[string]float64{srcC: 3, srcA: 0.2}, DefaultTrust: 1})
	if err := ix.SetSources(prefWeights(srcA, "group:core")); err != nil {
		t.Fatal(err)
	}
	tt := ix.Trust()
	for _, tc := range []struct {
		key    string
		want   float64
		listed bool
	}{
		{srcC, 3, true},   // file weight, not in the list
		{srcA, 1.5, true}, // the list overrides the file
		{"group:core", 1.25, true},
		{srcB, 1, false}, // neither: default
	} {
		if w, ok := tt.Source(tc.key); math.Abs(w-tc.want) > 1e-9 || ok != tc.listed {
			t.Errorf("Source(%s) = %v,%v, want %v,%v", tc.key[:8], w, ok, tc.want, tc.listed)
		}
	}
	// clearing the list brings the file weight of A back
	if err := ix.SetSources(nil); err != nil {
		t.Fatal(err)
	}
	if w, _ := ix.Trust().Source(srcA); w != 0.2 {
		t.Fatalf("after clearing, A weighs %v, want its file weight 0.2", w)
	}
}

func TestSetSources_BadInputChangesNothing(t *testing.T) {
	ix := openTest(t, Options{})
	if err := ix.SetSources(prefWeights(srcA)); err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]map[string]float64{
		"bad key":     {"npub1notakey": 1, srcB: 1},
		"short hex":   {"abcd": 1},
		"empty group": {"group:": 1},
		"zero weight": {srcB: 0},
		"NaN weight":  {srcB: math.NaN()},
		"negative":    {srcB: -1},
		"infinite":    {srcB: math.Inf(1)},
	} {
		if err := ix.SetSources(m); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if w, ok := ix.Trust().Source(srcA); !ok || w != 1.5 {
		t.Fatalf("after refused updates A weighs %v (listed %v), want 1.5", w, ok)
	}
}

// TestSetSources_ConcurrentWithSearch runs updates against searches and
// conflict listings; under -race it proves the live weights need no lock.
func TestSetSources_ConcurrentWithSearch(t *testing.T) {
	ix := openTest(t, Options{})
	mustIndex(t, ix,
		Doc{ID: "fromA", Kind: 30078, Source: srcA, Topic: "t", Text: "shared words here", CreatedAt: 1},
		Doc{ID: "fromB", Kind: 30078, Source: srcB, Topic: "t", Text: "shared words there", CreatedAt: 1},
	)
	var wg sync.WaitGroup
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if g == 0 {
					list := []string{srcA, srcB}
					if i%2 == 1 {
						list = []string{srcB, srcA}
					}
					if err := ix.SetSources(prefWeights(list...)); err != nil {
						t.Error(err)
						return
					}
					continue
				}
				if _, err := ix.Search(context.Background(), Query{Text: "shared words"}); err != nil {
					t.Error(err)
					return
				}
				_, _ = ix.Conflicts("t", nil, nil)
				_ = ix.Trust()
			}
		}(g)
	}
	wg.Wait()
	// the last update (i = 49, odd) put B first
	if res := search(t, ix, Query{Text: "shared words"}); len(res) != 2 || res[0].Doc.ID != "fromB" {
		t.Fatalf("final order %v, want fromB first", ids(res))
	}
}

func TestTrustOf_WithoutIndex(t *testing.T) {
	npubA, _ := nip19.EncodePublicKey(srcA)
	tt, err := TrustOf(Options{Sources: map[string]float64{npubA: 2}, ModelTiers: []ModelTier{{"anthropic/*", 1.2}}}, map[string]float64{srcB: 1.5})
	if err != nil {
		t.Fatal(err)
	}
	if w, ok := tt.Source(srcA); !ok || w != 2 {
		t.Errorf("file source by npub: %v %v", w, ok)
	}
	if w, _ := tt.Source(srcB); w != 1.5 {
		t.Errorf("live source: %v", w)
	}
	if tt.DefaultTrust != 1 || tt.Model("anthropic/claude") != 1.2 || tt.Model("meta/llama") != 1 {
		t.Errorf("default %v, model factors %v %v", tt.DefaultTrust, tt.Model("anthropic/claude"), tt.Model("meta/llama"))
	}
}
