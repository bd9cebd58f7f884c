package search

import (
	"math"
	"sort"

	"github.com/snowclaw/snowclaw/search/vector"
)

// A part (partition) holds the docs of one scope (Doc.Scope): its own
// keyword postings and the statistics ranking needs — doc count, total
// length, vector sum, chat message lengths. A search first decides which
// parts its reader may read (Query.Readable) and then ranks over those
// alone: document frequencies, the average length, the mean vector the
// query is centred on, the length prior and every rank come only from
// readable docs, so storing a doc a reader cannot read never moves what
// that reader sees. Candidates are filtered by part before they are
// ranked, not after.
type part struct {
	scope string
	slots []*Doc    // slot → doc; nil when free
	flen  []float64 // slot → field length as BM25 sees it (fieldLength)
	free  []uint32
	post  map[string][]posting // term → docs holding it; len(post) is the vocabulary

	docs  int
	vsum  []float64 // sum of the docs' vectors
	vn    int
	chatN int   // chat messages (threadKey != ""), for the length prior
	chatW int64 // their words
}

type posting struct{ slot, tf uint32 }

type docRef struct {
	p    *part
	slot uint32
}

// partSet is every part of a state and where each doc sits.
type partSet struct {
	dim     int
	byScope map[string]*part
	where   map[string]docRef
}

func newPartSet(dim int) *partSet {
	return &partSet{dim: dim, byScope: make(map[string]*part), where: make(map[string]docRef)}
}

func (ps *partSet) add(d *Doc, a analysed, v []float32) {
	p := ps.byScope[d.Scope]
	if p == nil {
		p = &part{scope: d.Scope, post: make(map[string][]posting), vsum: make([]float64, ps.dim)}
		ps.byScope[d.Scope] = p
	}
	var slot uint32
	if n := len(p.free); n > 0 {
		slot = p.free[n-1]
		p.free = p.free[:n-1]
		p.slots[slot], p.flen[slot] = d, fieldLength(a.length)
	} else {
		slot = uint32(len(p.slots))
		p.slots = append(p.slots, d)
		p.flen = append(p.flen, fieldLength(a.length))
	}
	for _, t := range a.terms {
		p.post[t.term] = append(p.post[t.term], posting{slot: slot, tf: t.n})
	}
	ps.where[d.ID] = docRef{p, slot}
	p.docs++
	if len(v) == ps.dim {
		addVec(p.vsum, v, 1)
		p.vn++
	}
	if threadKey(d) != "" {
		p.chatN++
		p.chatW += int64(countWords(d.Text))
	}
}

// remove takes d out; a must be d's analysis and v its vector (nil if none).
func (ps *partSet) remove(d *Doc, a analysed, v []float32) {
	ref, ok := ps.where[d.ID]
	if !ok {
		return
	}
	p := ref.p
	for _, t := range a.terms {
		list := p.post[t.term]
		for i, e := range list {
			if e.slot == ref.slot {
				list[i] = list[len(list)-1]
				list = list[:len(list)-1]
				break
			}
		}
		if len(list) == 0 {
			delete(p.post, t.term)
		} else {
			p.post[t.term] = list
		}
	}
	delete(ps.where, d.ID)
	p.slots[ref.slot] = nil
	p.free = append(p.free, ref.slot)
	p.docs--
	if len(v) == ps.dim {
		addVec(p.vsum, v, -1)
		p.vn--
	}
	if threadKey(d) != "" {
		p.chatN--
		p.chatW -= int64(countWords(d.Text))
	}
	if p.docs == 0 {
		delete(ps.byScope, p.scope)
	}
}

// fieldLength is a doc's length as bleve's BM25 saw it (the ranking was
// tuned on bleve): stored as a float32 norm 1/√len and read back.
func fieldLength(n int32) float64 {
	if n <= 0 {
		return 0
	}
	norm := float64(float32(1 / math.Sqrt(float64(n))))
	return 1 / (norm * norm)
}

func addVec(sum []float64, v []float32, sign float64) {
	for i, x := range v {
		sum[i] += sign * float64(x)
	}
}

// view is the part of the index one reader may read.
type view struct {
	ps    *partSet
	all   bool // every part is readable: no per-doc check needed
	parts []*part
	set   map[*part]bool

	docs  int
	chatN int
	chatW int64
}

// view asks readable about every part once; nil readable reads all.
func (ps *partSet) view(readable func(scope string) bool) *view {
	v := &view{ps: ps, all: readable == nil, set: make(map[*part]bool, len(ps.byScope))}
	for scope, p := range ps.byScope {
		if readable != nil && !readable(scope) {
			v.all = false
			continue
		}
		v.parts = append(v.parts, p)
		v.set[p] = true
		v.docs += p.docs
		v.chatN += p.chatN
		v.chatW += p.chatW
	}
	// map order must not leak into float sums: fixed order
	sort.Slice(v.parts, func(i, j int) bool { return v.parts[i].scope < v.parts[j].scope })
	return v
}

// has tells whether the doc with this id is in a readable part.
func (v *view) has(id string) bool {
	if v.all {
		return true
	}
	ref, ok := v.ps.where[id]
	return ok && v.set[ref.p]
}

// accept is has as a filter for the vector index (nil: take everything).
func (v *view) accept() func(string) bool {
	if v.all {
		return nil
	}
	return v.has
}

// mean is the mean vector of the readable docs (nil when none).
func (v *view) mean() []float32 {
	n := 0
	sum := make([]float64, v.ps.dim)
	for _, p := range v.parts {
		if p.vn == 0 {
			continue
		}
		n += p.vn
		for i, x := range p.vsum {
			sum[i] += x
		}
	}
	if n == 0 {
		return nil
	}
	m := make([]float32, len(sum))
	for i, x := range sum {
		m[i] = float32(x / float64(n))
	}
	return m
}

// searchText ranks the readable docs by BM25 over a weighted disjunction
// of terms, with document frequencies, doc count and average length taken
// over the readable parts only. The score is bleve's, which the ranking
// was tuned with: per term idf × saturation(√tf) × boost × idf × queryNorm,
// summed and scaled by the share of query terms matched. bleve's "average
// length" is the field's vocabulary size over the doc count (its field
// cardinality), summed over an alias's members; we keep that, summed over
// the readable parts, so scores stay what the tuning saw.
func (v *view) searchText(terms []weightedTerm, size int) []textHit {
	var n, total float64
	for _, p := range v.parts {
		n += float64(p.docs)
		total += float64(len(p.post))
	}
	if n == 0 || len(terms) == 0 || size <= 0 {
		return nil
	}
	avg := math.Ceil(total / n)
	idf := make([]float64, len(terms))
	var sq float64
	for i, t := range terms {
		df := 0
		for _, p := range v.parts {
			df += len(p.post[t.Term])
		}
		idf[i] = math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
		sq += (t.Weight * idf[i]) * (t.Weight * idf[i])
	}
	if sq == 0 {
		return nil
	}
	qn := 1 / math.Sqrt(sq)
	coordN := float64(len(terms))
	top := vector.NewTopK(size)
	var acc []float64
	var cnt []uint16
	for _, p := range v.parts {
		acc, cnt = acc[:0], cnt[:0]
		for i, t := range terms {
			list := p.post[t.Term]
			if len(list) == 0 {
				continue
			}
			if len(acc) == 0 {
				acc = append(acc, make([]float64, len(p.slots))...)
				cnt = append(cnt, make([]uint16, len(p.slots))...)
			}
			w := t.Weight * idf[i] * qn
			for _, e := range list {
				tf := math.Sqrt(float64(e.tf))
				norm := 1 - bm25B + bm25B*p.flen[e.slot]/avg
				acc[e.slot] += idf[i] * (tf * bm25K1) / (tf + bm25K1*norm) * w
				cnt[e.slot]++
			}
		}
		for slot, c := range cnt {
			if c == 0 {
				continue
			}
			top.Push(vector.Hit{ID: p.slots[slot].ID, Score: acc[slot] * float64(c) / coordN})
		}
	}
	hits := top.Sorted()
	out := make([]textHit, len(hits))
	for i, x := range hits {
		out[i] = textHit(x)
	}
	return out
}
