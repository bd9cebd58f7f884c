package search

import (
	"sort"

	"github.com/snowclaw/snowclaw/search/keyword"
)

// A part (partition) holds the docs of one scope (Doc.Scope): its own
// keyword postings (search/keyword) and the statistics ranking needs — doc count, total
// length, vector sum, chat message lengths. A search first decides which
// parts its reader may read (Query.Readable) and then ranks over those
// alone: document frequencies, the average length, the mean vector the
// query is centred on, the length prior and every rank come only from
// readable docs, so storing a doc a reader cannot read never moves what
// that reader sees. Candidates are filtered by part before they are
// ranked, not after.
type part struct {
	scope string
	kw    *keyword.Postings
	slots []*Doc // keyword slot → doc; nil when free

	docs  int
	vsum  []float64 // sum of the docs' vectors
	vn    int
	chatN int   // chat messages (threadKey != ""), for the length prior
	chatW int64 // their words
}

// partSet is every part of a state. A doc sits in the part of its Scope
// at its slot (Doc.slot): a map from id to place would cost about 60 MB
// at a million docs.
type partSet struct {
	dim     int
	byScope map[string]*part
}

func newPartSet(dim int) *partSet {
	return &partSet{dim: dim, byScope: make(map[string]*part)}
}

func (ps *partSet) add(d *Doc, a analysed, v []float32) {
	p := ps.byScope[d.Scope]
	if p == nil {
		p = &part{scope: d.Scope, kw: keyword.NewPostings(), vsum: make([]float64, ps.dim)}
		ps.byScope[d.Scope] = p
	}
	slot := p.kw.Add(a)
	if int(slot) == len(p.slots) {
		p.slots = append(p.slots, d)
	} else {
		p.slots[slot] = d
	}
	d.slot = slot
	p.docs++
	if len(v) == ps.dim {
		addVec(p.vsum, v, 1)
		p.vn++
	}
	if threadKey(d) != "" {
		p.chatN++
		p.chatW += int64(d.words)
	}
}

// remove takes d out; a must be d's analysis and v its vector (nil if none).
func (ps *partSet) remove(d *Doc, a analysed, v []float32) {
	p := ps.byScope[d.Scope]
	if p == nil || int(d.slot) >= len(p.slots) || p.slots[d.slot] != d {
		return // not in the index
	}
	p.kw.Remove(d.slot, a)
	p.slots[d.slot] = nil
	p.docs--
	if len(v) == ps.dim {
		addVec(p.vsum, v, -1)
		p.vn--
	}
	if threadKey(d) != "" {
		p.chatN--
		p.chatW -= int64(d.words)
	}
	if p.docs == 0 {
		delete(ps.byScope, p.scope)
	}
}

func addVec(sum []float64, v []float32, sign float64) {
	for i, x := range v {
		sum[i] += sign * float64(x)
	}
}

// view is the part of the index one reader may read.
type view struct {
	ps     *partSet
	byID   map[string]*Doc // the state's docs, to find a doc's scope by id
	all    bool            // every part is readable: no per-doc check needed
	parts  []*part
	scopes map[string]bool // the readable scopes

	docs  int
	chatN int
	chatW int64
}

// view asks readable about every part once; nil readable reads all.
// docs are the state's docs.
func (ps *partSet) view(readable func(scope string) bool, docs map[string]*Doc) *view {
	v := &view{ps: ps, byID: docs, all: readable == nil, scopes: make(map[string]bool, len(ps.byScope))}
	for scope, p := range ps.byScope {
		if readable != nil && !readable(scope) {
			v.all = false
			continue
		}
		v.parts = append(v.parts, p)
		v.scopes[scope] = true
		v.docs += p.docs
		v.chatN += p.chatN
		v.chatW += p.chatW
	}
	// A reader of every part needs no per-doc check: above all, the vector
	// graph may be walked (vector.Index.SearchAccept scans every code under
	// a filter so that unreadable vectors cannot steer a walk; here there
	// are none). At 100k public memories the scan cost an anonymous reader
	// 6 ms of CPU per search.
	if len(v.parts) == len(ps.byScope) {
		v.all = true
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
	d := v.byID[id]
	return d != nil && v.scopes[d.Scope]
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

// searchText ranks the readable docs by BM25 (keyword.Search) over a
// weighted disjunction of terms, with document frequencies, doc count and
// average length taken over the readable parts only.
func (v *view) searchText(terms []weightedTerm, size int) []textHit {
	kws := make([]*keyword.Postings, len(v.parts))
	for i, p := range v.parts {
		kws[i] = p.kw
	}
	return keyword.Search(kws, terms, size, func(part int, slot uint32) string {
		return v.parts[part].slots[slot].ID
	}, nil)
}
