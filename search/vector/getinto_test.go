package vector

import (
	"math/rand"
	"slices"
	"strconv"
	"testing"
)

// GetInto writes what Get returns, for the exact scan and for the graph
// (whose vectors are decoded codes), and reports a missing id.
func TestGetInto_SameAsGet(t *testing.T) {
	const dim, n = 16, 300
	rng := rand.New(rand.NewSource(5))
	for _, tc := range []struct {
		name      string
		threshold int // the Auto moves to the graph from here
	}{{"Flat", n + 1}, {"Graph", 10}} {
		t.Run(tc.name, func(t *testing.T) {
			x := NewAuto(dim, tc.threshold, DefaultParams)
			defer x.Wait()
			for i := range n {
				v := make([]float32, dim)
				for j := range v {
					v[j] = rng.Float32() - 0.5
				}
				Normalize(v)
				x.Add(strconv.Itoa(i), v)
			}
			buf := make([]float32, dim)
			for i := range n {
				id := strconv.Itoa(i)
				want, _ := x.Get(id)
				clear(buf)
				if !x.GetInto(id, buf) || !slices.Equal(buf, want) {
					t.Fatalf("GetInto(%s) = %v, want %v", id, buf, want)
				}
			}
			if x.GetInto("none", buf) {
				t.Fatal("GetInto of an id never added reported a vector")
			}
		})
	}
}
