package search

import (
	"math"
	"sort"
)

// Pseudo-relevance feedback (RM3): the few best keyword hits of a query
// say which other words its answer is written in ("what did she paint?"
// finds "painting" and "canvas", then "sunset" and "lake"), so a second
// keyword pass with those words finds turns that never repeat the
// question. The expansion is computed over the reader's view only, like
// everything else a search ranks by.

// expansion returns up to tn.prfTerms terms of the top tn.prfDocs hits,
// weighted by how much of each hit they make up times the hit's share of
// the feedback score times their idf; terms of the query, and terms in
// more than prfMaxDF of the readable docs (names every line starts with),
// are left out.
func (ix *Index) expansion(st *state, v *view, terms []weightedTerm, hits []textHit, tn tuning) ([]weightedTerm, error) {
	if tn.prfDocs <= 0 || tn.prfTerms <= 0 || len(hits) == 0 {
		return nil, nil
	}
	fb := hits[:min(len(hits), tn.prfDocs)]
	var total float64
	for _, h := range fb {
		total += h.Score
	}
	if total <= 0 {
		return nil, nil
	}
	inQuery := make(map[string]bool, len(terms))
	for _, t := range terms {
		inQuery[t.Term] = true
	}
	n := float64(v.docs)
	weight := make(map[string]float64)
	for _, h := range fb {
		d, ok := st.docs[h.ID]
		if !ok {
			continue
		}
		a, err := st.analyseIndexed(d) // its text is read back
		if err != nil {
			return nil, err
		}
		if a.Length == 0 {
			continue
		}
		for _, t := range a.Terms {
			if inQuery[t.Term] {
				continue
			}
			weight[t.Term] += (h.Score / total) * float64(t.N) / float64(a.Length)
		}
	}
	out := make([]weightedTerm, 0, len(weight))
	for term, w := range weight {
		df := v.df(term)
		if df == 0 || float64(df) > tn.prfMaxDF*n {
			continue
		}
		idf := math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
		out = append(out, weightedTerm{Term: term, Weight: w * idf})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Weight != out[j].Weight {
			return out[i].Weight > out[j].Weight
		}
		return out[i].Term < out[j].Term
	})
	return out[:min(len(out), tn.prfTerms)], nil
}

// feedbackVecs are the vectors of the first prfDocs keyword hits outside
// threads, for the vector side's feedback (vector.Toward): messages lean
// on their neighbours instead, as in withFeedback.
func feedbackVecs(st *state, hits []textHit, tn tuning) [][]float32 {
	if tn.vecFeedback <= 0 {
		return nil
	}
	var out [][]float32
	for _, h := range hits[:min(len(hits), tn.prfDocs)] {
		if d, ok := st.docs[h.ID]; ok && threadKey(d) == "" {
			if v, ok := st.vecs.Get(h.ID); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

// df is the number of readable docs holding term.
func (v *view) df(term string) int {
	n := 0
	for _, p := range v.parts {
		n += p.kw.DF(term)
	}
	return n
}

// withFeedback mixes the expansion pass into the first pass's scores:
// each expansion hit that is also a first-pass hit adds prfWeight of its
// score, scaled so both passes have the same best score. Feedback only
// reorders: a doc the expansion alone found holds no query term and would
// not pass the relevance floor, nor match a live subscription (Match).
// Messages in a thread are left as they are: they borrow from their
// neighbours instead, and feedback on top of that cost chat recall.
func withFeedback(st *state, first, second []textHit, tn tuning) (map[string]float64, map[string]bool) {
	scores := make(map[string]float64, len(first)+len(second))
	direct := make(map[string]bool, len(first))
	for _, h := range first {
		scores[h.ID] = h.Score
		direct[h.ID] = true
	}
	if len(first) == 0 || len(second) == 0 || second[0].Score <= 0 {
		return scores, direct
	}
	scale := tn.prfWeight * first[0].Score / second[0].Score
	for _, h := range second {
		if d, ok := st.docs[h.ID]; !ok || threadKey(d) != "" {
			continue // a message borrows from its thread instead (fuse.go)
		}
		if direct[h.ID] {
			scores[h.ID] += scale * h.Score
		}
	}
	return scores, direct
}
