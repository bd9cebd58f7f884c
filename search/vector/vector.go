// Package vector is the nearest-neighbour index of the search engine:
// vectors in, the k most similar out. Below Threshold vectors it scans them
// all (exact); from there on an HNSW graph over 8-bit codes of the vectors
// (hnsw.go, ann.go, quant.go) answers, linked in the background; the graph
// keeps only the codes, so its scores (the float dot product of the query
// with the vectors as stored, which Get returns) are within about 1e-3 of
// the exact scan's. The index lives in RAM (a graph also in a snapshot,
// snapshot.go): the search package persists the vectors in its doc log and
// adds them back on open.
package vector

import (
	"runtime"
	"sync/atomic"
)

// Hit is one nearest-neighbour result: cosine similarity of unit
// vectors.
type Hit struct {
	ID    string
	Score float64
}

// Index is the seam for nearest-neighbour search. Callers only add,
// remove and ask for the k best, so an approximate index (HNSW, ann.go)
// can replace the brute-force one without touching them. The Index calls
// Add and Remove under its write lock and the other methods under its read
// lock (or its writer mutex): those may run concurrently with each other,
// never with Add or Remove. Anything an implementation does beyond that
// (the graph worker) it must synchronise itself.
type Index interface {
	Add(id string, v []float32)
	Remove(id string)
	Get(id string) ([]float32, bool)
	// GetInto is Get writing into v (len(v) is the dimension) instead
	// of a new slice: for a walk over every vector, which would otherwise
	// make as much garbage as the vectors take (2 GB at a million).
	GetInto(id string, v []float32) bool
	Search(q []float32, k int) []Hit
	// SearchAccept is Search over the vectors accept takes (nil: all):
	// the k best of those, not the k best filtered afterwards.
	SearchAccept(q []float32, k int, accept func(id string) bool) []Hit
	// SearchNear is SearchAccept told the ids of vectors likely near q
	// (the first keyword hits of the same query). A graph walk starts
	// from them too, which lets it be narrower for the same recall;
	// an exact scan ignores them.
	SearchNear(q []float32, k int, accept func(id string) bool, near []string) []Hit
	Len() int
	// Mean is the mean of the stored vectors (nil when empty).
	Mean() []float32
}

// Threshold is the number of vectors from which the HNSW graph
// (ann.go) replaces the exact scan. Below it a scan is fast enough (a few
// ms at 20k) and exact; above it the scan dominates a search's time (about
// 15 ms of its 18 at 100k on two cores).
const Threshold = 20_000

// New is the index the search engine uses: NewAuto with Threshold and
// DefaultParams.
func New(dim int) *Auto { return NewAuto(dim, Threshold, DefaultParams) }

// Auto is a flatIndex until it holds threshold vectors, then an
// annIndex built from the flat one's vectors; it goes back to flat when
// fewer than half the threshold remain. Switching takes no longer than
// moving (or, back, copying) the vectors: the graph is linked in the
// background and searches scan what is not linked yet.
type Auto struct {
	threshold int
	p         Params
	flat      *flatIndex // exactly one of flat and ann is set
	ann       *annIndex
	stop      *atomic.Bool // tells the graph worker its owner is gone
}

// NewAuto returns an empty index of dim-dimensional vectors that turns
// into a graph with parameters p at threshold vectors.
func NewAuto(dim, threshold int, p Params) *Auto {
	x := &Auto{threshold: threshold, p: p, flat: newFlatIndex(dim), stop: new(atomic.Bool)}
	// A state dropped by Rebuild is never closed; once it is garbage, the
	// worker (which holds only the annIndex) stops linking its graph.
	runtime.AddCleanup(x, func(s *atomic.Bool) { s.Store(true) }, x.stop)
	return x
}

func (x *Auto) cur() Index {
	if x.ann != nil {
		return x.ann
	}
	return x.flat
}

func (x *Auto) Add(id string, v []float32) {
	if x.ann != nil {
		x.ann.Add(id, v)
		return
	}
	x.flat.Add(id, v)
	if x.flat.Len() >= x.threshold {
		x.ann = newANNFromFlat(x.flat, x.p, x.stop)
		x.flat = nil
	}
}

func (x *Auto) Remove(id string) {
	if x.flat != nil {
		x.flat.Remove(id)
		return
	}
	x.ann.Remove(id)
	if x.ann.Len() < x.threshold/2 {
		f := newFlatIndex(x.ann.dim)
		x.ann.drop(f)
		x.flat, x.ann = f, nil
	}
}

func (x *Auto) Get(id string) ([]float32, bool) { return x.cur().Get(id) }
func (x *Auto) GetInto(id string, v []float32) bool {
	return x.cur().GetInto(id, v)
}
func (x *Auto) Search(q []float32, k int) []Hit { return x.cur().Search(q, k) }
func (x *Auto) SearchAccept(q []float32, k int, accept func(string) bool) []Hit {
	return x.cur().SearchAccept(q, k, accept)
}
func (x *Auto) SearchNear(q []float32, k int, accept func(string) bool, near []string) []Hit {
	return x.cur().SearchNear(q, k, accept, near)
}
func (x *Auto) Len() int        { return x.cur().Len() }
func (x *Auto) Mean() []float32 { return x.cur().Mean() }

// Wait blocks until the graph, if there is one, has linked every complete
// batch of vectors, and tells whether there is a graph (tests and
// benchmarks). The caller must not Add or Remove meanwhile.
func (x *Auto) Wait() bool {
	if x.ann == nil {
		return false
	}
	x.ann.wait()
	return true
}
