package vector

import (
	"math/rand"
	"strconv"
	"testing"
)

// A walk told where its answer lies starts there: even at width 1, from
// the graph's far-off entry point, the node it was seeded with (the best
// by code for the query) comes back first. Without the seeds a width-1
// walk stops at the first local best, which on random vectors is rarely
// the global one.
func TestHNSW_SearchStartsAtTheSeeds(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	vecs := make([][]float32, 4000)
	for i := range vecs {
		vecs[i] = randomUnit(rng, 32)
	}
	a := testANN(t, vecs, smallHNSW)
	g := a.g
	s := &scratch{}
	missedUnseeded := 0
	for i := 0; i < 100; i++ {
		q := randomUnit(rng, 32)
		cs := g.scan(q, 1, 0, g.len(), nil) // the best few by code, unordered
		best := cs[0]
		for _, c := range cs {
			if c.sim > best.sim {
				best = c
			}
		}
		if got := g.search(q, 1, s, []uint32{best.node}); len(got) == 0 || got[0].sim < best.sim {
			t.Fatalf("query %d: seeded with %v, the walk returned %v", i, best, got)
		}
		if got := g.search(q, 1, s, nil); len(got) == 0 || got[0].sim < best.sim {
			missedUnseeded++
		}
	}
	// The test means something only if the walk alone misses.
	if missedUnseeded == 0 {
		t.Fatal("a width-1 walk found every best node without seeds: the seeds were not tested")
	}
}

// Hints are only hints: ids the index does not hold, removed ones and
// duplicates change nothing a reader could see, and the narrow seeded walk
// finds what the wide one does.
func TestANN_SearchNearHints(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	vecs := make([][]float32, 6000)
	for i := range vecs {
		vecs[i] = randomUnit(rng, 32)
	}
	p := smallHNSW
	p.EfSearch = 512 // wide: ef·ScanFactor must stay under the 6,000 linked
	p.ScanFactor = 2
	a := testANN(t, vecs, p)
	graphUsed(t, a, 10)
	a.Remove("17")
	exact := flatOf(vecs)
	exact.Remove("17")
	found, total := 0, 0
	for i := 0; i < 50; i++ {
		q := randomUnit(rng, 32)
		want := exact.Search(q, 10)
		near := []string{"nope", "17", want[0].ID, want[0].ID, want[3].ID}
		got := a.SearchNear(q, 10, nil, near)
		ids := map[string]bool{}
		for _, h := range got {
			if h.ID == "17" {
				t.Fatal("a removed node came back through the hints")
			}
			ids[h.ID] = true
		}
		for _, h := range want {
			total++
			if ids[h.ID] {
				found++
			}
		}
	}
	if r := float64(found) / float64(total); r < 0.95 {
		t.Fatalf("seeded walk recall@10 %.3f < 0.95", r)
	}
	if hits := a.SearchNear(randomUnit(rng, 32), 10, nil, []string{strconv.Itoa(len(vecs) + 5)}); len(hits) != 10 {
		t.Fatalf("unknown hint: %d hits", len(hits))
	}
}
