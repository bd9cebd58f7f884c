package vector

import (
	"math"
	"math/rand"
	"testing"
)

// A stored vector (its code times its scale) is within half a step of the
// vector in every component, zeros stay zero, and so a dot product with a
// unit query moves by at most half a step times the root of the nonzero
// count (Cauchy-Schwarz), on dense and sparse vectors alike; on average
// far less.
func TestQuant_DotProductsClose(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	sparse := func(dim, nonzero int) []float32 {
		v := make([]float32, dim)
		for range nonzero {
			v[rng.Intn(dim)] = float32(rng.NormFloat64())
		}
		Normalize(v)
		return v
	}
	for _, tc := range []struct {
		name    string
		dim     int
		vec     func() []float32
		meanTol float64
	}{
		{"dense 32", 32, func() []float32 { return randomUnit(rng, 32) }, 2e-3},
		{"dense 512", 512, func() []float32 { return randomUnit(rng, 512) }, 4e-4},
		{"sparse 512", 512, func() []float32 { return sparse(512, 100) }, 8e-4},
	} {
		var sum float64
		const pairs = 2000
		for range pairs {
			v, q := tc.vec(), randomUnit(rng, tc.dim)
			code := make([]int8, tc.dim)
			scale := quantize(v, code)
			got := make([]float32, tc.dim)
			decode(got, code, scale)
			nonzero := 0
			for j := range v {
				if d := math.Abs(float64(got[j] - v[j])); d > float64(scale)/2*1.0001 {
					t.Fatalf("%s: component %d stored as %v, was %v (scale %v)", tc.name, j, got[j], v[j], scale)
				}
				if v[j] == 0 && got[j] != 0 {
					t.Fatalf("%s: a zero stored as %v", tc.name, got[j])
				}
				if v[j] != 0 {
					nonzero++
				}
			}
			e := math.Abs(float64(Dot(q, got) - Dot(q, v)))
			if bound := float64(scale) / 2 * math.Sqrt(float64(nonzero)) * 1.001; e > bound {
				t.Fatalf("%s: dot moved %v, bound %v", tc.name, e, bound)
			}
			sum += e
		}
		if mean := sum / pairs; mean > tc.meanTol {
			t.Errorf("%s: dot products move %.2g on average, want ≤ %.2g", tc.name, mean, tc.meanTol)
		} else {
			t.Logf("%s: dot products move %.2g on average", tc.name, mean)
		}
	}
}
