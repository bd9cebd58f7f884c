package vector

import (
	"math"
	"math/rand"
	"testing"
)

func toHalves(v []float32) []uint16 {
	h := make([]uint16, len(v))
	putHalf(h, v)
	return h
}

func TestHalf_Conversions(t *testing.T) {
	cases := []struct {
		in   float32
		want float32 // after a round trip
	}{
		{0, 0},
		{1, 1},
		{-2, -2},
		{0.5, 0.5},
		{65504, 65504},                // largest finite half
		{1e6, float32(math.Inf(1))},   // overflow saturates
		{-1e6, float32(math.Inf(-1))}, //
		{1 + 1.0/2048, 1},             // tie: to even (down)
		{1 + 3.0/2048, 1 + 2.0/1024},  // tie: to even (up)
		{1 + 1.0/1024, 1 + 1.0/1024},  // representable
		{5.960464477539063e-08, 5.960464477539063e-08}, // smallest subnormal
		{1e-9, 0},                          // underflows to zero
		{6.103515625e-05, 6.103515625e-05}, // smallest normal
	}
	for _, c := range cases {
		if got := fromHalf(toHalf(c.in)); got != c.want {
			t.Errorf("round trip of %g = %g, want %g", c.in, got, c.want)
		}
	}
	if got := fromHalf(toHalf(float32(math.NaN()))); !math.IsNaN(float64(got)) {
		t.Errorf("NaN came back as %g", got)
	}
	// every finite half survives a round trip exactly, and the decoding
	// table agrees with fromHalf
	for h := 0; h < 1<<16; h++ {
		x := fromHalf(uint16(h))
		got := make([]float32, 1)
		getHalf(got, []uint16{uint16(h)})
		if math.Float32bits(got[0]) != math.Float32bits(x) {
			t.Fatalf("table decodes %#04x as %g, fromHalf as %g", h, got[0], x)
		}
		if math.IsNaN(float64(x)) {
			continue
		}
		if back := toHalf(x); back != uint16(h) && !(x == 0 && back&0x7fff == 0) {
			t.Fatalf("half %#04x → %g → %#04x", h, x, back)
		}
	}
}

// Unit vectors of the embedder's dimension stored in half precision keep
// their dot products within halfTol and their relative error near 2^-11.
func TestHalf_DotProductsClose(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	const dim = 512
	worst := 0.0
	for range 2000 {
		a, b := randomUnit(rng, dim), randomUnit(rng, dim)
		hb := make([]float32, dim)
		getHalf(hb, toHalves(b))
		worst = max(worst, math.Abs(float64(Dot(a, b)-Dot(a, hb))))
	}
	if worst > halfTol/4 {
		t.Fatalf("worst dot product moved by %g", worst)
	}
}
