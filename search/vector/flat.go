package vector

import (
	"runtime"
	"sync"
)

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
	if len(f.data)+f.dim > cap(f.data) {
		// double: append grows a large slice by a quarter, which copied
		// and cleared the whole store every few adds (6% of the relay's
		// CPU under a stream of embedded chat; snowbench ingest --mix group)
		grown := make([]float32, len(f.data), max(2*cap(f.data), 64*f.dim))
		copy(grown, f.data)
		f.data = grown
	}
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

func (f *flatIndex) Search(q []float32, k int) []Hit { return f.SearchAccept(q, k, nil) }

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
		s := float64(Dot(q, f.data[i*f.dim:(i+1)*f.dim]))
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
