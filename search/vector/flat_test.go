package vector

import (
	"fmt"
	"math/rand"
	"runtime"
	"testing"
)

func TestFlatIndex_Search(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	f := newFlatIndex(8)
	vecs := map[string][]float32{}
	for i := 0; i < 200; i++ {
		v := make([]float32, 8)
		for j := range v {
			v[j] = rng.Float32() - 0.5
		}
		Normalize(v)
		id := fmt.Sprint(i)
		vecs[id] = v
		f.Add(id, v)
	}
	for i := 0; i < 200; i += 3 {
		f.Remove(fmt.Sprint(i))
		delete(vecs, fmt.Sprint(i))
	}
	q := vecs["1"]
	hits := f.Search(q, 5)
	if len(hits) != 5 || hits[0].ID != "1" {
		t.Fatalf("hits %v", hits)
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Fatalf("not sorted: %v", hits)
		}
	}
	// brute check of the best non-self score
	best := -2.0
	for id, v := range vecs {
		if id != "1" && float64(Dot(q, v)) > best {
			best = float64(Dot(q, v))
		}
	}
	if hits[1].Score != best || f.Len() != len(vecs) {
		t.Fatalf("second hit %v, want %v", hits[1].Score, best)
	}
	if m := f.Mean(); len(m) != 8 {
		t.Fatal("no mean")
	}
}

// TestFlatIndex_Chunks adds, replaces and removes across chunk boundaries
// (a chunk filled, emptied, filled again) and checks every stored vector,
// the mean and an exact search against a plain map.
func TestFlatIndex_Chunks(t *testing.T) {
	const dim = 4
	rng := rand.New(rand.NewSource(2))
	f := newFlatIndex(dim)
	want := map[string][]float32{}
	vec := func() []float32 {
		v := []float32{rng.Float32() - 0.5, rng.Float32() - 0.5, rng.Float32() - 0.5, rng.Float32() - 0.5}
		Normalize(v)
		return v
	}
	check := func(stage string) {
		t.Helper()
		if f.Len() != len(want) || len(f.chunks) != (len(want)+chunkRows-1)/chunkRows {
			t.Fatalf("%s: Len %d, %d chunks; want %d vectors", stage, f.Len(), len(f.chunks), len(want))
		}
		var sum [dim]float64
		for id, v := range want {
			got, ok := f.Get(id)
			if !ok || fmt.Sprint(got) != fmt.Sprint(v) {
				t.Fatalf("%s: Get(%s) = %v, %v; want %v", stage, id, got, ok, v)
			}
			for j, x := range v {
				sum[j] += float64(x)
			}
		}
		if len(want) == 0 {
			if f.Mean() != nil {
				t.Fatalf("%s: mean of nothing", stage)
			}
			return
		}
		for j, m := range f.Mean() {
			if d := float64(m) - sum[j]/float64(len(want)); d > 1e-5 || d < -1e-5 {
				t.Fatalf("%s: mean[%d] off by %g", stage, j, d)
			}
		}
		for id, q := range want {
			if hits := f.Search(q, 1); len(hits) != 1 || hits[0].ID != id {
				t.Fatalf("%s: nearest of %s is %v", stage, id, hits)
			}
			break
		}
	}
	n := 2*chunkRows + 3
	for i := range n {
		id := fmt.Sprint(i)
		want[id] = vec()
		f.Add(id, want[id])
	}
	check("filled")
	for i := 0; i < n; i += 7 { // replace in place
		id := fmt.Sprint(i)
		want[id] = vec()
		f.Add(id, want[id])
	}
	check("replaced")
	for i := 0; i < n-chunkRows+1; i++ { // down to one full chunk minus one
		f.Remove(fmt.Sprint(i))
		delete(want, fmt.Sprint(i))
	}
	check("removed")
	f.Remove("absent")
	for i := n; i < n+chunkRows+1; i++ { // across the boundary again
		id := fmt.Sprint(i)
		want[id] = vec()
		f.Add(id, want[id])
	}
	check("refilled")
	for id := range want {
		f.Remove(id)
		delete(want, id)
	}
	check("emptied")
}

// TestFlatIndex_AddAllocatesOnce: adding vectors allocates about the
// memory they take, not a growing copy of everything stored so far.
func TestFlatIndex_AddAllocatesOnce(t *testing.T) {
	const dim, n = 256, 40 * chunkRows
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprint(i)
	}
	v := make([]float32, dim)
	v[0] = 1
	f := newFlatIndex(dim)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, id := range ids {
		f.Add(id, v)
	}
	runtime.ReadMemStats(&after)
	data := float64(n * dim * 4)
	if got := float64(after.TotalAlloc - before.TotalAlloc); got > 1.3*data {
		t.Errorf("adding %d vectors (%.0f MB) allocated %.1f MB", n, data/1e6, got/1e6)
	}
}
