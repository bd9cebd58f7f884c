package vector

import (
	"math/rand"
	"slices"
	"testing"
)

func TestNthSmallest(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	gens := map[string]func(i int) float64{
		"random":     func(int) float64 { return rng.Float64()*2 - 1 },
		"few values": func(int) float64 { return float64(rng.Intn(3)) },
		"equal":      func(int) float64 { return 0.25 },
		"ascending":  func(i int) float64 { return float64(i) },
		"descending": func(i int) float64 { return -float64(i) },
	}
	for name, gen := range gens {
		for _, n := range []int{1, 2, 3, 10, 257, 5000} {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = gen(i)
			}
			sorted := slices.Sorted(slices.Values(xs))
			for _, k := range []int{0, n / 2, n * 99 / 100, n - 1} {
				if got := NthSmallest(slices.Clone(xs), k); got != sorted[k] {
					t.Fatalf("%s, n=%d: NthSmallest(%d) = %v, sorted has %v", name, n, k, got, sorted[k])
				}
			}
		}
	}
}
