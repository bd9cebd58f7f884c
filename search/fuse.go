package search

import (
	"context"
	"slices"
	"sort"

	"github.com/snowclaw/snowclaw/search/session"
	"github.com/snowclaw/snowclaw/search/vector"
)

// tuning holds the ranking knobs that are not Options: they were set on
// conversational memory (internal/eval/locomo) and are not meant to be changed
// per deployment.
type tuning struct {
	// Neighbour context: a message lends ctxWeight of its score to the
	// messages up to ctxWindow positions around it in its thread, times
	// ctxDecay for each further step.
	ctxWeight float64
	ctxWindow int
	ctxDecay  float64
	// center is how much of the mean doc vector is taken off the query
	// vector: the direction every doc shares (greetings, the names of the
	// two people in a chat) says nothing about which doc is meant, and an
	// embedder without corpus statistics cannot down-weight it itself.
	center float64
	// lengthAlpha is the exponent of the length prior (thread.Set.
	// lengthFactor); 0 turns it off.
	lengthAlpha float64
	// contextFloor lets a thread neighbour of a doc that passed the
	// relevance floor pass it too (floor.go).
	contextFloor bool
	// Pseudo-relevance feedback (feedback.go): terms from the best
	// prfDocs keyword hits, at most prfTerms, none in more than prfMaxDF
	// of the docs, mixed in at prfWeight.
	prfDocs, prfTerms   int
	prfMaxDF, prfWeight float64
	// dateBoost lifts docs written in a month the query names (search/querydate).
	dateBoost float64
	// speakerBoost (search/speaker), sessWeight (search/session),
	// prfWeight 1 and vecFeedback: docs/search-tuning.md.
	speakerBoost, sessWeight float64
	// vecFeedback moves the query vector toward the mean vector of the
	// first prfDocs keyword hits (vector.Toward) before the vector side
	// ranks; the floor still tests the query's own vector.
	vecFeedback float64
}

// On LoCoMo (`snowclaw eval locomo`) the neighbour context lifts BM25 recall@10 from
// 61.7 to 72.9; a window of 2 with decay 0.7 beat 1 and 3-4, and lending
// more than half a hit's score crowded out the hits themselves. The length
// prior with alpha 0.6 lifted multi-hop recall@10 from 43.9 to 45.3-45.7
// and NDCG@10 from 55.9 to 56.4 (overall recall@10 72.9 to 72.7-72.8);
// 0.5 kept less of the multi-hop gain, and 0.7-0.8 gained no more but cost
// single-hop questions, whose answer is more often a short reply.
//
// Pseudo-relevance feedback was tuned on the LoCoMo tuning split (eval
// locomo --split tune) and confirmed on the holdout split (--split
// holdout; docs/search-tuning.md), turns published as memories: recall@10
// 63.2 → 64.3 (tune) and 62.6 → 63.1 (holdout); 5 docs and 10 terms gave
// 63.9 and 63.4. Letting docs found by the expansion alone in gained
// more (64.0 and 64.0) but they hold no query term, so it was left out.
// Chat messages do not take feedback: on chat it cost 1.4 points on the
// holdout half. The date boost (search/querydate), 1 (a doc written in the month
// a query names, or the month after, counts double), tuned the same way:
// tune chat 74.2 → 75.5, memories 64.2 → 65.2 (0.3 gave 74.5 and 64.7, 2
// no more than 1); holdout chat 71.8 → 72.5, memories 63.5 → 64.7.
var defaultTuning = tuning{ctxWeight: 0.4, ctxWindow: 2, ctxDecay: 0.7, center: 1, lengthAlpha: 0.6, contextFloor: true,
	prfDocs: 10, prfTerms: 20, prfMaxDF: 0.05, prfWeight: 1, dateBoost: 1, speakerBoost: 1, sessWeight: 0.1, vecFeedback: 0.5}

// queryTerms analyses the query like indexed text; a term repeated in the
// query weighs more.
func (ix *Index) queryTerms(text string) []weightedTerm {
	toks := ix.analyzer.Analyze([]byte(text))
	var out []weightedTerm
	pos := make(map[string]int)
	for _, t := range toks {
		term := string(t.Term)
		if i, ok := pos[term]; ok {
			out[i].Weight++
			continue
		}
		pos[term] = len(out)
		out = append(out, weightedTerm{Term: term, Weight: 1})
	}
	return out
}

// candidates pulls depth hits from BM25 and from the vectors, spreads scores
// to thread neighbours and fuses the two lists. exhausted tells that no
// deeper pull can find more.
func (ix *Index) candidates(ctx context.Context, st *state, v *view, terms []weightedTerm, qvec []float32, depth int) ([]*candidate, bool, error) {
	tn := ix.tune
	exhausted := true
	byID := make(map[string]*candidate)
	get := func(id string) *candidate {
		if c, ok := byID[id]; ok {
			return c
		}
		d, ok := st.docs[id]
		if !ok || !v.has(id) {
			return nil // a thread neighbour the reader may not read
		}
		c := &candidate{doc: d}
		byID[id] = c
		return c
	}

	var fb [][]float32 // the first keyword hits' vectors (feedbackVecs)
	var near []string  // the first keyword hits, where the vector walk starts too
	if ix.opts.BM25Weight > 0 {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		hits := v.searchText(terms, depth)
		fb = feedbackVecs(st, hits, tn)
		for _, h := range hits[:min(len(hits), tn.prfDocs)] {
			near = append(near, h.ID)
		}
		if len(hits) == depth {
			exhausted = false
		}
		var more []textHit
		exp, err := ix.expansion(st, v, terms, hits, tn)
		if err != nil {
			return nil, false, err
		}
		if len(exp) > 0 {
			more = v.searchText(exp, depth)
		}
		scores, direct := withFeedback(st, hits, more, tn)
		ranked := ix.spread(st, v, scores, tn)
		for i, r := range ranked {
			if c := get(r.ID); c != nil {
				c.bm25Hit = direct[r.ID]
				c.ex.BM25Rank = i + 1
				c.ex.BM25Score = r.Score
				c.ex.Fused += ix.opts.BM25Weight / (ix.opts.RRFK + float64(i+1))
			}
		}
	}
	if qvec != nil && ix.opts.VectorWeight > 0 {
		mean := v.mean()
		rankBy := vector.Toward(qvec, fb, tn.vecFeedback)
		if tn.center > 0 {
			rankBy = vector.Centered(rankBy, mean, tn.center)
		}
		// what the floor compares (floor.go): centred on the mean of the
		// whole index, which the floor is calibrated on, as Match does
		fq := ix.floorQuery(qvec, st.vecs.Mean())
		hits := st.vecs.SearchNear(rankBy, depth, v.accept(), near)
		if len(hits) == depth {
			exhausted = false
		}
		// The uncentred similarity of each doc, read once: a stored
		// vector is decoded into a fresh slice on every Get.
		type simPair struct{ plain, floor float64 }
		sims := make(map[string]simPair, 2*len(hits))
		sim := func(id string) (simPair, bool) {
			if s, ok := sims[id]; ok {
				return s, true
			}
			dv, ok := st.vecs.Get(id)
			if !ok {
				return simPair{}, false
			}
			s := simPair{float64(vector.Dot(qvec, dv)), float64(vector.Dot(fq, dv))}
			sims[id] = s
			return s, true
		}
		scores := make(map[string]float64, len(hits))
		for _, h := range hits {
			// A doc that shares nothing with the query gets no credit,
			// however the centring moved it.
			if s, ok := sim(h.ID); ok && s.plain > 0 {
				scores[h.ID] = h.Score
			}
		}
		ranked := ix.spread(st, v, scores, tn)
		for i, r := range ranked {
			if c := get(r.ID); c != nil {
				c.ex.VectorRank = i + 1
				if s, ok := sim(r.ID); ok {
					c.ex.VectorScore = s.floor
					c.vecHit = ix.passesVector(s.plain, s.floor, st.floor)
				}
				c.ex.Fused += ix.opts.VectorWeight / (ix.opts.RRFK + float64(i+1))
			}
		}
	}
	out := make([]*candidate, 0, len(byID))
	for _, c := range byID {
		out = append(out, c)
	}
	return out, exhausted, nil
}

type scored struct {
	ID    string
	Score float64
}

// spread adds to each doc a share of its thread neighbours' scores and
// returns the docs by descending score. Neighbours without a score of their
// own join the list, which is how a reply that never repeats the question's
// words can still be found.
func (ix *Index) spread(st *state, v *view, scores map[string]float64, tn tuning) []scored {
	out := make(map[string]float64, len(scores))
	// in id order, not map order: a doc borrowing from several hits sums
	// their shares, and float sums in another order may differ in the
	// last bit, which reorders ties from one run of a query to the next
	ids := make([]string, 0, len(scores))
	for id := range scores {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		s := scores[id]
		out[id] += s
		d, ok := st.docs[id]
		if !ok {
			continue
		}
		st.sessions.Lend(id, tn.sessWeight*s, v.has, out)
		if tn.ctxWeight <= 0 {
			continue
		}
		st.threads.Neighbours(threadKey(d), d.CreatedAt, d.ID, tn.ctxWindow, func(nb string, dist int) {
			if !v.has(nb) {
				return // neither lends nor borrows across what the reader may read
			}
			w := tn.ctxWeight
			if dist < 0 {
				dist = -dist
			}
			for i := 1; i < dist; i++ {
				w *= tn.ctxDecay
			}
			out[nb] += w * s
		})
	}
	ranked := make([]scored, 0, len(out))
	for id, s := range out {
		ranked = append(ranked, scored{id, s})
	}
	sort.Slice(ranked, func(i, j int) bool {
		if ranked[i].Score != ranked[j].Score {
			return ranked[i].Score > ranked[j].Score
		}
		return ranked[i].ID < ranked[j].ID
	})
	return ranked
}

// sessionKey: a record's session, if it is a turn (search/session). A
// search asks the set (session.Set.Key), which read it when d was indexed;
// d is indexed (state.keep has set its speaker: its text may be on disk).
func sessionKey(d *Doc) string { return session.Key(d.D, d.Pubkey, d.spk) }
