package search

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/snowclaw/snowclaw/search/querydate"
	"github.com/snowclaw/snowclaw/search/speaker"
	"github.com/snowclaw/snowclaw/search/vector"
)

// DefaultLimit is the number of results of a search without a limit
// (docs/design.md "Search").
const DefaultLimit = 20

// minCandidates is the first depth pulled from each list; Search digs
// deeper only when Accept or the version rule rejects too many.
const minCandidates = 100

// candidate is one doc on its way through fusion.
type candidate struct {
	doc *Doc
	ex  Explain
	// bm25Hit and vecHit: the doc itself passed the floor's keyword or
	// vector side (floor.go), not only borrowed from a neighbour.
	bm25Hit, vecHit bool
}

// Search ranks docs for q. BM25 and vector candidates are fused by weighted
// reciprocal rank, then scaled by trust, confidence and recency. Superseded
// and older versions are left out unless q.IncludeSuperseded; q.Accept
// filters in rank order before q.Limit applies.
func (ix *Index) Search(ctx context.Context, q Query) (res []Result, err error) {
	defer recoverAs(&err, "search")
	fault("search", q.Text)
	if ix.broken.Load() {
		return nil, ErrBroken
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	terms := ix.queryTerms(q.Text)
	var qvec []float32
	if len(terms) > 0 && ix.opts.VectorWeight > 0 {
		vs, err := ix.emb.Embed(ctx, []string{q.Text})
		if err != nil {
			return nil, fmt.Errorf("search: embed query with %s: %w", ix.emb.Name(), err)
		}
		if len(vs) == 1 && len(vs[0]) == ix.emb.Dim() {
			qvec = vs[0]
			vector.Normalize(qvec)
		}
	}

	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return nil, ErrClosed
	}
	st := ix.st
	now := ix.now()
	v := st.parts.view(q.Readable, st.docs)
	if strings.TrimSpace(q.Text) == "" {
		return ix.collect(st, ix.browse(st, v), q, limit)
	}
	if len(terms) == 0 {
		return nil, nil // only stop words: nothing to rank by
	}
	months := querydate.Months(q.Text)
	names := speaker.Named(q.Text)
	for depth := minCandidates; ; depth *= 4 {
		depth = max(depth, 2*limit)
		cands, exhausted, err := ix.candidates(ctx, st, v, terms, qvec, depth)
		if err != nil {
			return nil, err
		}
		cands = ix.aboveFloor(st, v, cands)
		for _, c := range cands {
			ix.finish(c, now, st.threads.LengthFactor(c.doc.ID, ix.tune.lengthAlpha, v.chatN, v.chatW))
			c.ex.Date = querydate.Factor(months, c.doc.CreatedAt, ix.tune.dateBoost)
			c.ex.Speaker = speaker.Factor(names, c.doc.spk, ix.tune.speakerBoost)
			c.ex.Final *= c.ex.Date * c.ex.Speaker
		}
		sortCandidates(cands)
		out, err := ix.collect(st, cands, q, limit)
		if err != nil || len(out) >= limit || exhausted {
			return out, err
		}
	}
}

// collect walks candidates in rank order and keeps the visible, accepted
// ones up to limit. Accept sees a doc without its text; the text of the
// results is read back (doctext.go).
func (ix *Index) collect(st *state, cands []*candidate, q Query, limit int) ([]Result, error) {
	var out []Result
	for _, c := range cands {
		if !q.IncludeSuperseded && st.hidden(c.doc) {
			continue
		}
		d, _ := st.export(c.doc, false)
		if q.Accept != nil && !q.Accept(d) {
			continue
		}
		d, err := st.export(c.doc, true)
		if err != nil {
			return nil, err
		}
		r := Result{Doc: d, Score: c.ex.Final}
		if q.Explain {
			ex := c.ex
			r.Explain = &ex
		}
		out = append(out, r)
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

// browse ranks every doc when the query has no free text (only
// extensions): by trust, confidence and recency, newest first on ties.
func (ix *Index) browse(st *state, v *view) []*candidate {
	now := ix.now()
	cands := make([]*candidate, 0, v.docs)
	for _, d := range st.docs {
		if !v.has(d.ID) {
			continue
		}
		c := &candidate{doc: d}
		c.ex.Fused = 1
		ix.finish(c, now, 1) // no text: nothing for the length prior to weigh
		cands = append(cands, c)
	}
	sortCandidates(cands)
	return cands
}

// finish applies the per-doc factors to the fused score; length is the
// doc's length prior (thread.Set.LengthFactor).
func (ix *Index) finish(c *candidate, now time.Time, length float64) {
	c.ex.Trust = ix.trust(c.doc)
	c.ex.Confidence = confidenceFactor(c.doc.Confidence)
	c.ex.Recency = ix.recencyFactor(c.doc, now)
	c.ex.Length = length
	c.ex.Final = c.ex.Fused * c.ex.Trust * c.ex.Confidence * c.ex.Recency * c.ex.Length
}

func sortCandidates(cs []*candidate) {
	sort.Slice(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.ex.Final != b.ex.Final {
			return a.ex.Final > b.ex.Final
		}
		if a.doc.CreatedAt != b.doc.CreatedAt {
			return a.doc.CreatedAt > b.doc.CreatedAt
		}
		return a.doc.ID < b.doc.ID
	})
}
