package vector

import (
	"math"
	"testing"
)

func TestToward_Cases(t *testing.T) {
	q := []float32{1, 0, 0}
	for _, tc := range []struct {
		name string
		fb   [][]float32
		beta float64
		want []float32
	}{
		{"no feedback", nil, 1, []float32{1, 0, 0}},
		{"beta 0", [][]float32{{0, 1, 0}}, 0, []float32{1, 0, 0}},
		{"one doc, beta 1: halfway", [][]float32{{0, 1, 0}}, 1, []float32{float32(math.Sqrt2 / 2), float32(math.Sqrt2 / 2), 0}},
		{"the mean of two, not their sum", [][]float32{{0, 1, 0}, {0, 0, 1}}, 1, []float32{2 / float32(math.Sqrt(6)), 1 / float32(math.Sqrt(6)), 1 / float32(math.Sqrt(6))}},
		{"a vector of another size", [][]float32{{0, 1}}, 1, []float32{1, 0, 0}},
	} {
		got := Toward(q, tc.fb, tc.beta)
		for i := range tc.want {
			if math.Abs(float64(got[i]-tc.want[i])) > 1e-6 {
				t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
				break
			}
		}
	}
	if q[0] != 1 || q[1] != 0 || q[2] != 0 {
		t.Fatalf("q changed: %v", q)
	}
}

// BenchmarkToward: the vector feedback of one query, 10 hits of 512
// dimensions (the built-in embedder's size).
func BenchmarkToward(b *testing.B) {
	q := make([]float32, 512)
	fb := make([][]float32, 10)
	for i := range fb {
		fb[i] = make([]float32, 512)
		for j := range fb[i] {
			fb[i][j] = float32((i*7+j*13)%17) / 17
		}
	}
	q[0] = 1
	for b.Loop() {
		Toward(q, fb, 0.5)
	}
}
