package search

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/snowclaw/snowclaw/search/vector"
)

// The relevance floor (issue 14): fusion ranks whatever the two lists
// hold, and the vector side of an embedder scores every doc, so without a
// floor a query that matches nothing still returned the least unrelated
// docs. A result must pass one of:
//
//   - bm25: the doc holds at least one query term after analysis (stop
//     words and stemming as indexed);
//   - vector: its cosine similarity to the query is at least the index's
//     vector floor, calibrated per embedder from the index itself;
//   - context: it is a chat message within the neighbour window of one in
//     its thread that passed bm25 or vector (the reply that answers a
//     question without repeating its words; threads.go). Stored search
//     only: a message's later neighbours do not exist yet when it is
//     broadcast.
//
// The same test decides what a live search subscription receives (Match).
const (
	FloorBM25    = "bm25"
	FloorVector  = "vector"
	FloorBoth    = "both"
	FloorContext = "context"
)

// Vector floor calibration. The floor is a high percentile of the cosine
// similarity of random doc pairs drawn from the index: two docs picked at
// random are, nearly always, about different things, so a query scoring
// above what 99 in 100 unrelated pairs reach is more alike than chance.
// Measured on LoCoMo dev with the built-in embedder: random doc pairs
// p50 0.02, p95 0.20, p99 0.30; a question and its gold turn p50 0.26; the
// nonsense query "zzzqqq" reaches at most 0.22 (hash collisions of its
// character n-grams). The floor is recorded in meta.json with the
// embedder's name, so a changed embedder is calibrated afresh, and
// calibrated again whenever the index has doubled since.
const (
	floorPercentile = 0.99
	floorSamples    = 512 // docs sampled: ~130k pairs, a few ms
	minFloorDocs    = 64  // fewer vectors than this: the embedder's default
	builtinFloor    = 0.30
	// otherFloor is the default of an embedder the index has not seen
	// enough docs of to calibrate: neural embedders put unrelated texts
	// at 0.2-0.5 cosine, related ones above.
	otherFloor = 0.5
)

// defaultFloor is the vector floor of an index too small to calibrate.
func defaultFloor(e Embedder) float64 {
	if strings.HasPrefix(e.Name(), "builtin-") {
		return builtinFloor
	}
	return otherFloor
}

// calibrate sets the vector floor from the docs' own vectors (see above).
// It reads st under the caller's lock and is deterministic: docs are
// sampled by a hash of their id, not by map order.
func (s *state) calibrate(e Embedder) {
	n := s.vecs.Len()
	s.floorDocs = n
	if n < minFloorDocs {
		s.floor = defaultFloor(e)
		return
	}
	stride := uint64(max(1, n/(2*floorSamples)))
	type sample struct {
		h uint64
		v []float32
	}
	var ss []sample
	for id := range s.docs {
		h := hashString(id)
		if h%stride != 0 {
			continue
		}
		if v, ok := s.vecs.Get(id); ok {
			ss = append(ss, sample{h, v})
		}
	}
	sort.Slice(ss, func(i, j int) bool { return ss[i].h < ss[j].h })
	ss = ss[:min(len(ss), floorSamples)]
	sims := make([]float64, 0, len(ss)*(len(ss)-1)/2)
	for i := range ss {
		for j := i + 1; j < len(ss); j++ {
			sims = append(sims, float64(vector.Dot(ss[i].v, ss[j].v)))
		}
	}
	if len(sims) == 0 {
		s.floor = defaultFloor(e)
		return
	}
	slices.Sort(sims)
	s.floor = sims[int(floorPercentile*float64(len(sims)-1))]
}

// needsCalibration: never calibrated, or the index has doubled (or
// halved) since.
func (s *state) needsCalibration() bool {
	n := s.vecs.Len()
	if s.floor == 0 {
		return true
	}
	if s.floorDocs < minFloorDocs {
		return n >= minFloorDocs
	}
	return n >= 2*s.floorDocs || 2*n < s.floorDocs
}

// VectorFloor is the cosine similarity a doc must reach to pass the
// relevance floor on the vector side alone.
func (ix *Index) VectorFloor() float64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.st.floor
}

// Match is the relevance floor for one doc, the test live search
// subscriptions use: the floor d passes for text (FloorBM25, FloorVector
// or FloorBoth), "" if none. An empty text (extensions only) passes as
// FloorBoth would not say anything: ok is true with floor "".
func (ix *Index) Match(ctx context.Context, text string, d Doc) (floor string, ok bool, err error) {
	defer recoverAs(&err, "match")
	if strings.TrimSpace(text) == "" {
		return "", true, nil
	}
	terms := ix.queryTerms(text)
	if len(terms) == 0 {
		return "", false, nil // only stop words: nothing to match by
	}
	bm25 := false
	if ix.opts.BM25Weight > 0 {
		want := make(map[string]bool, len(terms))
		for _, t := range terms {
			want[t.Term] = true
		}
		for _, t := range analyse(ix.analyzer, &d).terms {
			if want[t.term] {
				bm25 = true
				break
			}
		}
	}
	vec := false
	if ix.opts.VectorWeight > 0 && !d.KeywordOnly {
		sim, err := ix.similarity(ctx, text, &d)
		if err != nil {
			return "", false, err
		}
		vec = sim >= ix.VectorFloor()
	}
	floor = floorOf(bm25, vec)
	return floor, floor != "", nil
}

// similarity is the cosine of text and d, d's stored vector if it is
// indexed (the one stored search compares), else embedded now.
func (ix *Index) similarity(ctx context.Context, text string, d *Doc) (float64, error) {
	texts := []string{text}
	ix.mu.RLock()
	dv, indexed := ix.st.vecs.Get(d.ID)
	ix.mu.RUnlock()
	if !indexed {
		texts = append(texts, EmbedText(d))
	}
	vs, err := ix.emb.Embed(ctx, texts)
	if err != nil {
		return 0, fmt.Errorf("search: embed with %s: %w", ix.emb.Name(), err)
	}
	if len(vs) != len(texts) {
		return 0, fmt.Errorf("search: embedder %s returned %d vectors for %d texts", ix.emb.Name(), len(vs), len(texts))
	}
	for _, v := range vs {
		if len(v) != ix.emb.Dim() {
			return 0, fmt.Errorf("search: embedder %s returned dimension %d, want %d", ix.emb.Name(), len(v), ix.emb.Dim())
		}
		vector.Normalize(v)
	}
	if !indexed {
		dv = vs[1]
	}
	return float64(vector.Dot(vs[0], dv)), nil
}

func floorOf(bm25, vec bool) string {
	switch {
	case bm25 && vec:
		return FloorBoth
	case bm25:
		return FloorBM25
	case vec:
		return FloorVector
	}
	return ""
}

// aboveFloor keeps the candidates that pass the relevance floor and says
// in their explain which one.
func (ix *Index) aboveFloor(st *state, v *view, cands []*candidate) []*candidate {
	passed := make(map[string]bool, len(cands))
	for _, c := range cands {
		if c.bm25Hit || c.vecHit {
			passed[c.doc.ID] = true
		}
	}
	out := cands[:0]
	for _, c := range cands {
		c.ex.VectorFloor = st.floor
		c.ex.Floor = floorOf(c.bm25Hit, c.vecHit)
		if c.ex.Floor == "" && ix.tune.contextFloor && ix.tune.ctxWeight > 0 {
			st.threads.neighbours(c.doc, ix.tune.ctxWindow, func(nb string, _ int) {
				if passed[nb] && v.has(nb) {
					c.ex.Floor = FloorContext
				}
			})
		}
		if c.ex.Floor != "" {
			out = append(out, c)
		}
	}
	return out
}
