package keyword

import "slices"

// Slot names one doc for Score: the index of its part among the parts
// given, and its slot there.
type Slot struct {
	Part int
	Slot uint32
}

// Score returns the score Search would give each of docs for terms over
// parts, 0 for a doc holding none of them, without ranking anything else.
// The search package's feedback pass only reweighs the docs the first
// pass found, so it asks for their scores on the expansion terms instead
// of ranking every doc by them: a lookup per term and doc (the lists are
// in slot order) rather than a walk over twenty lists. The shares are
// summed in query order and scaled by the share of terms matched, as
// Search sums them, so a doc's score is the same to the bit.
func Score(parts []*Postings, terms []Term, docs []Slot) []float64 {
	out := make([]float64, len(docs))
	w, ok := newWeights(parts, terms)
	if !ok || len(docs) == 0 {
		return out
	}
	cnt := make([]int, len(docs))
	for i, t := range terms {
		for d, ref := range docs {
			if ref.Part < 0 || ref.Part >= len(parts) {
				continue
			}
			p := parts[ref.Part]
			l := p.post[t.Term]
			if l == nil {
				continue
			}
			j, found := slices.BinarySearchFunc(l.p, ref.Slot, cmpSlot)
			if !found {
				continue
			}
			out[d] += w.termShare(i, t.Weight, l.p[j].tf, p.flen[ref.Slot])
			cnt[d]++
		}
	}
	for d, c := range cnt {
		out[d] = out[d] * float64(c) / w.coordN
	}
	return out
}
