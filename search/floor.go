package search

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/snowclaw/snowclaw/search/hashembed"
	"github.com/snowclaw/snowclaw/search/indexdir"
	"github.com/snowclaw/snowclaw/search/vector"
)

// The relevance floor (docs/search.md#relevant-or-nothing): fusion ranks whatever the two lists
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
//     question without repeating its words; threads.go), or a turn of the
//     session of one that passed (search/session). Stored search only: a
//     message's later neighbours do not exist yet when it is broadcast.
//
// The same test decides what a live search subscription receives (Match).
const (
	FloorBM25    = "bm25"
	FloorVector  = "vector"
	FloorBoth    = "both"
	FloorContext = "context"
)

// Vector floor calibration. The floor is a high percentile of the cosine
// similarity between queries and docs that have nothing to do with each
// other, both drawn from the index itself: each pseudo-query is a few
// words of one sampled doc, compared with every other sampled doc. Pairs
// picked at random are nearly always unrelated, so a query scoring above
// what 99 in 100 of them reach is more alike than chance. Queries, not
// docs, because a short text is where an embedder is least sure: measured
// on LoCoMo turns stored as memories, random doc pairs put the p99 at
// 0.28 while "xylophone quasar flux" reached 0.32 against "Joanna: See ya
// Nate!" through hash collisions of the built-in embedder; pseudo-queries
// put the floor above that. The floor is recorded in meta.json with the
// embedder's name, so a changed embedder is calibrated afresh, and
// calibrated again whenever the index has doubled since.
const (
	floorPercentile = 0.99
	floorSamples    = 512 // docs sampled
	floorQueries    = 256 // pseudo-queries among them: ~130k pairs
	floorQueryWords = 3
	minFloorDocs    = 64 // fewer vectors than this: the embedder's default
	// builtinFloor is the built-in embedder's floor on an index too small
	// to calibrate: the floor calibrated on the LoCoMo conversations' turns
	// (docs/search.md#relevant-or-nothing).
	builtinFloor = 0.40
	// otherFloor is the default of any other embedder: neural embedders
	// put unrelated texts at 0.2-0.5 cosine, related ones above.
	otherFloor = 0.5
)

// defaultFloor is the vector floor of an index too small to calibrate.
func defaultFloor(e Embedder) float64 {
	if strings.HasPrefix(e.Name(), "builtin-") {
		return builtinFloor
	}
	return otherFloor
}

// floorSample is one sampled doc: its vector and a pseudo-query made of
// some of its words.
type floorSample struct {
	h     uint64
	v     []float32
	query string
	d     *Doc // until its text is read
}

// floorSamples picks docs by a hash of their id (not map order, so the
// floor is deterministic). The caller holds the read lock. Only the
// picked docs' texts are read (back from the doc log: doctext.go).
func (s *state) floorSamples() ([]floorSample, error) {
	n := s.vecs.Len()
	stride := uint64(max(1, n/(2*floorSamples)))
	var ss []floorSample
	for id, d := range s.docs {
		h := hashString(id)
		if h%stride != 0 {
			continue
		}
		if v, ok := s.vecs.Get(id); ok {
			ss = append(ss, floorSample{h: h, v: v, d: d})
		}
	}
	sort.Slice(ss, func(i, j int) bool { return ss[i].h < ss[j].h })
	ss = ss[:min(len(ss), floorSamples)]
	for i := range ss {
		f, err := s.export(ss[i].d, true)
		if err != nil {
			return nil, err
		}
		ss[i].query, ss[i].d = hashembed.QueryOf(f.Text, ss[i].h, floorQueryWords), nil
	}
	return ss, nil
}

// calibrateFloor computes the vector floor from samples (see above); ok is
// false when there are too few to say.
func calibrateFloor(ctx context.Context, e Embedder, ss []floorSample, n int) (float64, bool, error) {
	if len(ss) < minFloorDocs {
		return 0, false, nil
	}
	var texts []string
	var from []int
	for i, s := range ss {
		if s.query != "" && len(texts) < floorQueries {
			texts = append(texts, s.query)
			from = append(from, i)
		}
	}
	if len(texts) == 0 {
		return 0, false, nil
	}
	qs, err := e.Embed(ctx, texts)
	if err != nil || len(qs) != len(texts) {
		return 0, false, fmt.Errorf("search: calibrating the vector floor with %s: %v", e.Name(), err)
	}
	sims := make([]float64, 0, len(qs)*len(ss))
	for qi, q := range qs {
		if len(q) != e.Dim() {
			return 0, false, fmt.Errorf("search: embedder %s returned dimension %d, want %d", e.Name(), len(q), e.Dim())
		}
		vector.Normalize(q)
		for j, s := range ss {
			if j != from[qi] {
				sims = append(sims, float64(vector.DotApprox(q, s.v)))
			}
		}
	}
	// A query is compared with every doc, so the floor must sit where
	// the best of n unrelated docs lands, not a typical one: the
	// 1 - 1/n quantile (n the docs indexed), at least floorPercentile,
	// at most the largest similarity sampled.
	q := max(floorPercentile, 1-1/float64(max(1, n)))
	return vector.NthSmallest(sims, min(len(sims)-1, int(q*float64(len(sims))))), true, nil
}

// NullQuerier is an embedder that can say what a query about nothing in
// particular is: texts of a few words drawn from its vocabulary, the same
// n texts on every call. Such an embedder's vector floor is calibrated on
// them (calibrateNull) instead of on pseudo-queries cut from the index's
// own docs, which in a corpus of many docs on few subjects (templated
// notes, one long conversation) are near the other docs by meaning, as
// they should be, and so put the floor above every paraphrase.
type NullQuerier interface {
	NullQueries(n int) []string
}

// The null calibration: nullQueries queries, the nullDepth best vector
// hits of each, and the floor at the nullQuantile of their best
// similarities.
const (
	nullQueries = 256
	nullDepth   = 16
)

// nullQuantile: the share of null queries that get no vector-only answer
// from an index of the size calibrated; minCosine: the plain cosine
// similarity a doc needs besides, under a centred floor
// (docs/search-tuning.md).
const (
	nullQuantile = 0.9
	minCosine    = 0.3
)

// calibrateNull sets the floor where null queries (NullQuerier) come:
// for each, the best similarity (centred: floorQuery) of a doc that
// shares no term with it (a doc that does passes the keyword side
// anyway), and the floor at the nullQuantile of those, over the whole
// index. A floor of 0 or below (most null queries nearer no doc than the
// mean is) says nothing: ok is false, and the embedder's default holds. A doc must be nearer
// the query than the best unrelated doc is to most queries about nothing
// here. ok is false when the index is too small to say.
func (ix *Index) calibrateNull(ctx context.Context, st *state, nq NullQuerier) (float64, bool, error) {
	texts := nq.NullQueries(nullQueries)
	qs, err := ix.emb.Embed(ctx, texts)
	if err != nil || len(qs) != len(texts) {
		return 0, false, fmt.Errorf("search: calibrating the vector floor with %s: %v", ix.emb.Name(), err)
	}
	for _, q := range qs {
		if len(q) != ix.emb.Dim() {
			return 0, false, fmt.Errorf("search: embedder %s returned dimension %d, want %d", ix.emb.Name(), len(q), ix.emb.Dim())
		}
		vector.Normalize(q)
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if st.vecs.Len() < minFloorDocs {
		return 0, false, nil
	}
	v := st.parts.view(nil, st.docs)
	mean := st.vecs.Mean()
	bests := make([]float64, 0, len(qs))
	for i, q := range qs {
		fq := ix.floorQuery(q, mean)
		shared := map[string]bool{}
		if terms := ix.queryTerms(texts[i]); len(terms) > 0 {
			for _, h := range v.searchText(terms, 4*nullDepth) {
				shared[h.ID] = true
			}
		}
		best := 0.0
		for _, h := range st.vecs.Search(fq, nullDepth+len(shared)) {
			if !shared[h.ID] {
				best = h.Score
				break
			}
		}
		bests = append(bests, best)
	}
	floor := vector.NthSmallest(bests, min(len(bests)-1, int(nullQuantile*float64(len(bests)))))
	return floor, floor > 0, nil
}

// centredFloor: the floor of a NullQuerier embedder compares the query
// centred on the mean doc vector, as the vector side ranks (tuning.center):
// what every doc shares says nothing about which doc is meant, and on the
// paraphrase set it moved more of the memories asked for above the floor
// than the plain cosine at the same share of null queries kept out
// (docs/search-tuning.md).
func (ix *Index) centredFloor() bool {
	_, ok := ix.emb.(NullQuerier)
	return ok
}

// passesVector: a doc of cosine similarity plain to the query, and
// similarity centred to the query's centred vector (floorQuery), passes
// the vector floor. Under a centred floor it must also be at least
// minCosine alike uncentred: centring on a corpus of one subject (a single
// conversation) brings every doc near the mean, and what is left of a
// doc barely alike can still point the query's way.
func (ix *Index) passesVector(plain, centred, floor float64) bool {
	if !ix.centredFloor() {
		return plain >= floor
	}
	return centred >= floor && plain >= minCosine
}

// floorQuery is the query vector the floor compares docs with: q itself,
// or for a centred floor q less mean, unit length.
func (ix *Index) floorQuery(q, mean []float32) []float32 {
	if !ix.centredFloor() || mean == nil {
		return q
	}
	c := vector.Centered(q, mean, 1)
	vector.Normalize(c)
	return c
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

// recalibrate calibrates st's vector floor when it needs it and records
// the new floor in meta.json. The caller holds writeMu, or st is not yet
// shared. An embedder that fails keeps the floor it had: a floor is
// never a reason to refuse a write.
func (ix *Index) recalibrate(ctx context.Context, st *state) error {
	ix.mu.RLock()
	need := st.needsCalibration()
	var ss []floorSample
	var serr error
	_, null := ix.emb.(NullQuerier)
	if need && !null {
		ss, serr = st.floorSamples()
	}
	n := st.vecs.Len()
	ix.mu.RUnlock()
	if !need {
		return nil
	}
	if serr != nil {
		return serr
	}
	var floor float64
	var ok bool
	var err error
	if nq, isNull := ix.emb.(NullQuerier); isNull {
		floor, ok, err = ix.calibrateNull(ctx, st, nq)
	} else {
		floor, ok, err = calibrateFloor(ctx, ix.emb, ss, n)
	}
	switch {
	case err != nil && st.floor > 0:
		return nil // try again at the next write
	case err != nil || !ok:
		floor = defaultFloor(ix.emb)
	}
	ix.locked(func() { st.floor, st.floorDocs = floor, n })
	if ix.dir == "" || st.meta.Gen == 0 {
		return nil
	}
	st.meta.VectorFloor, st.meta.FloorDocs = floor, n
	return indexdir.WriteMeta(ix.dir, st.meta)
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
		for _, t := range analyse(ix.analyzer, &d).Terms {
			if want[t.Term] {
				bm25 = true
				break
			}
		}
	}
	vec := false
	if ix.opts.VectorWeight > 0 && !d.KeywordOnly {
		plain, centred, err := ix.similarity(ctx, text, &d)
		if err != nil {
			return "", false, err
		}
		vec = ix.passesVector(plain, centred, ix.VectorFloor())
	}
	floor = floorOf(bm25, vec)
	return floor, floor != "", nil
}

// similarity is the cosine of text and d, d's stored vector if it is
// indexed (the one stored search compares), else embedded now, and the
// similarity the floor compares (floorQuery, centred on the mean of every
// doc in the index, as stored search's floor is).
func (ix *Index) similarity(ctx context.Context, text string, d *Doc) (plain, centred float64, err error) {
	texts := []string{text}
	ix.mu.RLock()
	dv, indexed := ix.st.vecs.Get(d.ID)
	var mean []float32
	if ix.centredFloor() {
		mean = ix.st.vecs.Mean()
	}
	ix.mu.RUnlock()
	if !indexed {
		texts = append(texts, EmbedText(d))
	}
	vs, err := ix.emb.Embed(ctx, texts)
	if err != nil {
		return 0, 0, fmt.Errorf("search: embed with %s: %w", ix.emb.Name(), err)
	}
	if len(vs) != len(texts) {
		return 0, 0, fmt.Errorf("search: embedder %s returned %d vectors for %d texts", ix.emb.Name(), len(vs), len(texts))
	}
	for _, v := range vs {
		if len(v) != ix.emb.Dim() {
			return 0, 0, fmt.Errorf("search: embedder %s returned dimension %d, want %d", ix.emb.Name(), len(v), ix.emb.Dim())
		}
		vector.Normalize(v)
	}
	if !indexed {
		dv = vs[1]
	}
	return float64(vector.Dot(vs[0], dv)), float64(vector.Dot(ix.floorQuery(vs[0], mean), dv)), nil
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
			st.threads.Neighbours(threadKey(c.doc), c.doc.CreatedAt, c.doc.ID, ix.tune.ctxWindow, func(nb string, _ int) {
				if passed[nb] && v.has(nb) {
					c.ex.Floor = FloorContext
				}
			})
		}
		if c.ex.Floor == "" && ix.tune.sessWeight > 0 && st.sessions.Any(c.doc.ID, v.has, func(m string) bool { return passed[m] }) {
			c.ex.Floor = FloorContext
		}
		if c.ex.Floor != "" {
			out = append(out, c)
		}
	}
	return out
}
