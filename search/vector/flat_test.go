package vector

import (
	"fmt"
	"math/rand"
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
