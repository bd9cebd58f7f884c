package vector

import (
	"math"
	"math/rand"
	"testing"
)

func TestDotFast_MatchesDot(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for n := 0; n <= 80; n++ {
		a, b := make([]float32, n), make([]float32, n)
		for i := range a {
			a[i], b[i] = rng.Float32()-0.5, rng.Float32()-0.5
		}
		want, got := Dot(a, b), dotFast(a, b)
		if math.Abs(float64(want-got)) > 1e-5 {
			t.Fatalf("n=%d: dotFast %v, dot %v", n, got, want)
		}
	}
}

func BenchmarkDot512(b *testing.B) {
	x, y := make([]float32, 512), make([]float32, 512)
	for i := range x {
		x[i], y[i] = float32(i%7), 1
	}
	var s float32
	b.Run("go", func(b *testing.B) {
		for b.Loop() {
			s += Dot(x, y)
		}
	})
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			s += dotFast(x, y)
		}
	})
	_ = s
}

func TestDotInt8_MatchesGo(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, n := range []int{32, 64, 512, 1024} {
		a, b := make([]int8, n), make([]int8, n)
		for i := range a {
			a[i], b[i] = int8(rng.Intn(255)-127), int8(rng.Intn(255)-127)
		}
		if got, want := dotInt8(a, b), dotInt8Go(a, b); got != want {
			t.Fatalf("n=%d: %d, want %d", n, got, want)
		}
	}
}

// BenchmarkDotRandomAccess: dot products against vectors picked at random
// from 100k, as a graph search reads them.
func BenchmarkDotRandomAccess(b *testing.B) {
	const n, dim = 100000, 512
	rng := rand.New(rand.NewSource(1))
	f := make([]float32, n*dim)
	c := make([]int8, n*dim)
	for i := range f {
		f[i] = rng.Float32()
		c[i] = int8(rng.Intn(255) - 127)
	}
	idx := make([]int, 1<<16)
	for i := range idx {
		idx[i] = rng.Intn(n)
	}
	q, qc := f[:dim], c[:dim]
	b.Run("float32", func(b *testing.B) {
		var s float32
		i := 0
		for b.Loop() {
			j := idx[i&(1<<16-1)] * dim
			s += dotFast(q, f[j:j+dim])
			i++
		}
		_ = s
	})
	b.Run("int8", func(b *testing.B) {
		var s int32
		i := 0
		for b.Loop() {
			j := idx[i&(1<<16-1)] * dim
			s += dotInt8(qc, c[j:j+dim])
			i++
		}
		_ = s
	})
}

// DotApprox stays within the bound its comment gives on unit vectors of
// the embedders' dimensions.
func TestDotApprox_NearDot(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, n := range []int{1, 7, 64, 384, 512, 768, 1024} {
		for range 50 {
			a, b := make([]float32, n), make([]float32, n)
			for i := range a {
				a[i], b[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
			}
			Normalize(a)
			Normalize(b)
			if d := math.Abs(float64(DotApprox(a, b) - Dot(a, b))); d > 1e-5 {
				t.Fatalf("n=%d: DotApprox %v, Dot %v", n, DotApprox(a, b), Dot(a, b))
			}
		}
	}
}
