package search

import (
	"container/heap"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// vectorHit is one nearest-neighbour result: cosine similarity of unit
// vectors.
type vectorHit struct {
	ID    string
	Score float64
}

// vectorIndex is the seam for nearest-neighbour search. Callers only add,
// remove and ask for the k best, so an approximate index (HNSW, ann.go)
// can replace the brute-force one without touching them. The Index calls
// Add and Remove under its write lock and the other methods under its read
// lock (or its writer mutex): those may run concurrently with each other,
// never with Add or Remove. Anything an implementation does beyond that
// (the graph worker) it must synchronise itself.
type vectorIndex interface {
	Add(id string, v []float32)
	Remove(id string)
	Get(id string) ([]float32, bool)
	Search(q []float32, k int) []vectorHit
	// SearchAccept is Search over the vectors accept takes (nil: all):
	// the k best of those, not the k best filtered afterwards.
	SearchAccept(q []float32, k int, accept func(id string) bool) []vectorHit
	Len() int
	// Mean is the mean of the stored vectors (nil when empty).
	Mean() []float32
}

// annThreshold is the number of vectors from which the HNSW graph
// (ann.go) replaces the exact scan. Below it a scan is fast enough (a few
// ms at 20k) and exact; above it the scan dominates a search's time (about
// 15 ms of its 18 at 100k on two cores).
const annThreshold = 20_000

// newVectorIndex is the index a state starts with.
func newVectorIndex(dim int) vectorIndex {
	return newAutoIndex(dim, annThreshold, defaultHNSW)
}

// autoIndex is a flatIndex until it holds threshold vectors, then an
// annIndex built from the flat one's vectors; it goes back to flat when
// fewer than half the threshold remain. Switching takes no longer than
// moving (or, back, copying) the vectors: the graph is linked in the
// background and searches scan what is not linked yet.
type autoIndex struct {
	threshold int
	p         hnswParams
	flat      *flatIndex // exactly one of flat and ann is set
	ann       *annIndex
	stop      *atomic.Bool // tells the graph worker its owner is gone
}

func newAutoIndex(dim, threshold int, p hnswParams) *autoIndex {
	x := &autoIndex{threshold: threshold, p: p, flat: newFlatIndex(dim), stop: new(atomic.Bool)}
	// A state dropped by Rebuild is never closed; once it is garbage, the
	// worker (which holds only the annIndex) stops linking its graph.
	runtime.AddCleanup(x, func(s *atomic.Bool) { s.Store(true) }, x.stop)
	return x
}

func (x *autoIndex) cur() vectorIndex {
	if x.ann != nil {
		return x.ann
	}
	return x.flat
}

func (x *autoIndex) Add(id string, v []float32) {
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

func (x *autoIndex) Remove(id string) {
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

func (x *autoIndex) Get(id string) ([]float32, bool)       { return x.cur().Get(id) }
func (x *autoIndex) Search(q []float32, k int) []vectorHit { return x.cur().Search(q, k) }
func (x *autoIndex) SearchAccept(q []float32, k int, accept func(string) bool) []vectorHit {
	return x.cur().SearchAccept(q, k, accept)
}
func (x *autoIndex) Len() int        { return x.cur().Len() }
func (x *autoIndex) Mean() []float32 { return x.cur().Mean() }

// flatIndex scans every vector. Vectors sit in one contiguous slice so the
// scan is cache friendly; a removal moves the last vector into the hole.
type flatIndex struct {
	dim  int
	data []float32
	ids  []string
	pos  map[string]int
	sum  []float64 // running sum of the vectors, for Mean
}

func newFlatIndex(dim int) *flatIndex {
	return &flatIndex{dim: dim, pos: make(map[string]int), sum: make([]float64, dim)}
}

func (f *flatIndex) Len() int { return len(f.ids) }

func (f *flatIndex) Add(id string, v []float32) {
	if len(v) != f.dim {
		return
	}
	if i, ok := f.pos[id]; ok {
		f.addSum(f.data[i*f.dim:(i+1)*f.dim], -1)
		copy(f.data[i*f.dim:(i+1)*f.dim], v)
		f.addSum(v, 1)
		return
	}
	f.addSum(v, 1)
	f.pos[id] = len(f.ids)
	f.ids = append(f.ids, id)
	f.data = append(f.data, v...)
}

func (f *flatIndex) Remove(id string) {
	i, ok := f.pos[id]
	if !ok {
		return
	}
	f.addSum(f.data[i*f.dim:(i+1)*f.dim], -1)
	last := len(f.ids) - 1
	if i != last {
		copy(f.data[i*f.dim:(i+1)*f.dim], f.data[last*f.dim:(last+1)*f.dim])
		f.ids[i] = f.ids[last]
		f.pos[f.ids[i]] = i
	}
	f.ids = f.ids[:last]
	f.data = f.data[:last*f.dim]
	delete(f.pos, id)
}

func (f *flatIndex) addSum(v []float32, sign float64) {
	for j, x := range v {
		f.sum[j] += sign * float64(x)
	}
}

func (f *flatIndex) Mean() []float32 {
	if len(f.ids) == 0 {
		return nil
	}
	m := make([]float32, f.dim)
	n := float64(len(f.ids))
	for j, s := range f.sum {
		m[j] = float32(s / n)
	}
	return m
}

func (f *flatIndex) Get(id string) ([]float32, bool) {
	i, ok := f.pos[id]
	if !ok {
		return nil, false
	}
	return f.data[i*f.dim : (i+1)*f.dim], true
}

// parallelMin is the index size from which a scan is split across cores:
// at 100k vectors of 512 dimensions one scan reads 200 MB, and a single
// core makes search p95 miss 20 ms on a 2-core machine.
const parallelMin = 8192

func (f *flatIndex) Search(q []float32, k int) []vectorHit { return f.SearchAccept(q, k, nil) }

func (f *flatIndex) SearchAccept(q []float32, k int, accept func(string) bool) []vectorHit {
	if len(q) != f.dim || k <= 0 || len(f.ids) == 0 {
		return nil
	}
	n := len(f.ids)
	parts := 1
	if n >= parallelMin {
		parts = min(runtime.GOMAXPROCS(0), 8)
	}
	heaps := make([]hitHeap, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*n/parts, (p+1)*n/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			heaps[p] = f.scan(q, k, lo, hi, accept)
		}()
	}
	wg.Wait()
	h := heaps[0]
	for _, other := range heaps[1:] {
		for _, hit := range other {
			if len(h) < k {
				heap.Push(&h, hit)
			} else if hit.Score > h[0].Score || (hit.Score == h[0].Score && hit.ID < h[0].ID) {
				h[0] = hit
				heap.Fix(&h, 0)
			}
		}
	}
	out := make([]vectorHit, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(vectorHit)
	}
	return out
}

// scan keeps the k best of vectors lo..hi that accept takes in a min-heap.
// accept is asked only about vectors that would enter the heap.
func (f *flatIndex) scan(q []float32, k, lo, hi int, accept func(string) bool) hitHeap {
	h := make(hitHeap, 0, k+1)
	for i := lo; i < hi; i++ {
		s := float64(dot(q, f.data[i*f.dim:(i+1)*f.dim]))
		if len(h) == k && s <= h[0].Score {
			continue
		}
		if accept != nil && !accept(f.ids[i]) {
			continue
		}
		if len(h) < k {
			heap.Push(&h, vectorHit{ID: f.ids[i], Score: s})
		} else {
			h[0] = vectorHit{ID: f.ids[i], Score: s}
			heap.Fix(&h, 0)
		}
	}
	return h
}

func dot(a, b []float32) float32 {
	var s0, s1, s2, s3 float32
	n := len(a) &^ 3
	for i := 0; i < n; i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for i := n; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// normalize scales v to unit length in place; a zero vector stays zero.
func normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
}

// hitHeap is a min-heap on score, ties broken so the larger ID is evicted
// first and results are deterministic.
type hitHeap []vectorHit

func (h hitHeap) Len() int { return len(h) }
func (h hitHeap) Less(i, j int) bool {
	if h[i].Score != h[j].Score {
		return h[i].Score < h[j].Score
	}
	return h[i].ID > h[j].ID
}
func (h hitHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)   { *h = append(*h, x.(vectorHit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// centered returns q minus a times mean, or q when there is no mean.
func centered(q, mean []float32, a float64) []float32 {
	if len(mean) != len(q) {
		return q
	}
	out := make([]float32, len(q))
	for i := range q {
		out[i] = q[i] - float32(a)*mean[i]
	}
	return out
}
