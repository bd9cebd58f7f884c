package keyword

import (
	"fmt"
	"math/rand"
	"testing"
)

// Score gives every doc exactly the score Search ranks it by, bit for
// bit, across parts, reused slots and boosted terms; docs that hold no
// query term, and refs outside the parts, score 0.
func TestScore_SameAsSearch(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for round := range 20 {
		parts, ids := zipfCorpus(r, 1+round%4, 500+r.Intn(2000), 50+r.Intn(1000))
		where := map[string]Slot{}
		var all []Slot
		for pi := range parts {
			for s, id := range ids[pi] {
				if id != "" {
					where[id] = Slot{pi, uint32(s)}
					all = append(all, Slot{pi, uint32(s)})
				}
			}
		}
		id := func(p int, s uint32) string { return ids[p][s] }
		for range 10 {
			var terms []Term
			for range 1 + r.Intn(20) {
				terms = append(terms, Term{Term: fmt.Sprint("t", r.Intn(80)), Weight: 0.2 + 2*r.Float64()})
			}
			terms = dedupe(terms)
			want := map[Slot]float64{}
			for _, h := range exhaustive(parts, terms, len(all), id) {
				want[where[h.ID]] = h.Score
			}
			got := Score(parts, terms, append(all, Slot{Part: len(parts), Slot: 0}, Slot{Part: -1}))
			for i, ref := range all {
				if got[i] != want[ref] {
					t.Fatalf("round %d: doc %s scored %v, Search ranks it by %v", round, ids[ref.Part][ref.Slot], got[i], want[ref])
				}
			}
			if n := len(all); got[n] != 0 || got[n+1] != 0 {
				t.Fatalf("refs outside the parts scored %v %v", got[n], got[n+1])
			}
		}
	}
}
