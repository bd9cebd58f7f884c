package vector

import (
	"runtime"
	"sync"
)

// flatIndex scans every vector. Vectors sit in fixed-size chunks, each one
// contiguous so the scan stays cache friendly; a removal moves the last
// vector into the hole. Chunks, not one growing slice: growing it copied
// and cleared the whole store again and again (a doubling slice still
// touched three times the memory it kept, 2.3% of the relay's CPU under a
// stream of embedded chat, snowbench ingest --mix group), and a new chunk
// touches only its own pages.
type flatIndex struct {
	dim    int
	chunks [][]float32 // chunkRows vectors each; the last one is filled up to len(ids)
	ids    []string
	pos    map[string]int
	sum    []float64 // running sum of the vectors, for Mean
}

// chunkRows is the vectors per chunk: 1 MB of 512-dimension vectors.
const chunkRows = 512

func newFlatIndex(dim int) *flatIndex {
	return &flatIndex{dim: dim, pos: make(map[string]int), sum: make([]float64, dim)}
}

func (f *flatIndex) Len() int { return len(f.ids) }

// row is vector i, in place.
func (f *flatIndex) row(i int) []float32 {
	o := (i % chunkRows) * f.dim
	return f.chunks[i/chunkRows][o : o+f.dim : o+f.dim]
}

func (f *flatIndex) Add(id string, v []float32) {
	if len(v) != f.dim {
		return
	}
	if i, ok := f.pos[id]; ok {
		f.addSum(f.row(i), -1)
		copy(f.row(i), v)
		f.addSum(v, 1)
		return
	}
	f.addSum(v, 1)
	i := len(f.ids)
	if i/chunkRows == len(f.chunks) {
		f.chunks = append(f.chunks, make([]float32, chunkRows*f.dim))
	}
	f.pos[id] = i
	f.ids = append(f.ids, id)
	copy(f.row(i), v)
}

func (f *flatIndex) Remove(id string) {
	i, ok := f.pos[id]
	if !ok {
		return
	}
	f.addSum(f.row(i), -1)
	last := len(f.ids) - 1
	if i != last {
		copy(f.row(i), f.row(last))
		f.ids[i] = f.ids[last]
		f.pos[f.ids[i]] = i
	}
	f.ids = f.ids[:last]
	if last%chunkRows == 0 {
		f.chunks[len(f.chunks)-1] = nil
		f.chunks = f.chunks[:len(f.chunks)-1]
	}
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
	return f.row(i), true
}

func (f *flatIndex) GetInto(id string, v []float32) bool {
	i, ok := f.pos[id]
	if ok {
		copy(v, f.row(i))
	}
	return ok
}

// parallelMin is the index size from which a scan is split across cores:
// at 100k vectors of 512 dimensions one scan reads 200 MB, and a single
// core makes search p95 miss 20 ms on a 2-core machine.
const parallelMin = 8192

func (f *flatIndex) Search(q []float32, k int) []Hit { return f.SearchAccept(q, k, nil) }

// SearchNear is SearchAccept: a scan is exact without hints.
func (f *flatIndex) SearchNear(q []float32, k int, accept func(string) bool, _ []string) []Hit {
	return f.SearchAccept(q, k, accept)
}

func (f *flatIndex) SearchAccept(q []float32, k int, accept func(string) bool) []Hit {
	if len(q) != f.dim || k <= 0 || len(f.ids) == 0 {
		return nil
	}
	n := len(f.ids)
	parts := 1
	if n >= parallelMin {
		parts = min(runtime.GOMAXPROCS(0), 8)
	}
	tops := make([]*TopK, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*n/parts, (p+1)*n/parts
		wg.Go(func() { tops[p] = f.scan(q, k, lo, hi, accept) })
	}
	wg.Wait()
	top := tops[0]
	for _, other := range tops[1:] {
		for _, hit := range other.h {
			top.Push(hit)
		}
	}
	return top.Sorted()
}

// scan keeps the k best of vectors lo..hi that accept takes.
// accept is asked only about vectors that would enter the heap.
func (f *flatIndex) scan(q []float32, k, lo, hi int, accept func(string) bool) *TopK {
	top := NewTopK(k)
	for i := lo; i < hi; i++ {
		s := float64(Dot(q, f.row(i)))
		if top.Full() && s <= top.Min() {
			continue
		}
		if accept != nil && !accept(f.ids[i]) {
			continue
		}
		top.Push(Hit{ID: f.ids[i], Score: s})
	}
	return top
}
