package vector

import "math"

// The graph index keeps each vector as an 8-bit code: the vector divided
// by its largest magnitude, times 127, rounded, and that magnitude / 127
// (its scale). Walks and scans compare the query's code with the codes;
// their best candidates are scored on the float query against the decoded
// codes (code × scale), which is what Get returns. A component moves by at
// most half a step (scale / 2, about 1/250 of the largest component), so
// a dot product with a unit query moves by about 4e-4 at 512 dimensions
// (TestQuant_DotProductsClose), for a byte a dimension: a quarter of a
// float vector, half of a half-precision one.

// quantize writes v's 8-bit code into out (len(out) ≥ len(v)) and returns
// its scale.
func quantize(v []float32, out []int8) float32 {
	var m float32
	for _, x := range v {
		m = max(m, x, -x)
	}
	if !(m > 0) { // zero, or NaN
		return 0
	}
	inv := 127 / m
	for i, x := range v {
		out[i] = int8(math.Round(float64(x * inv)))
	}
	return m / 127
}

// dotInt8Go is the portable dotInt8.
func dotInt8Go(a, b []int8) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	for i := 0; i+4 <= len(a); i += 4 {
		s0 += int32(a[i]) * int32(b[i])
		s1 += int32(a[i+1]) * int32(b[i+1])
		s2 += int32(a[i+2]) * int32(b[i+2])
		s3 += int32(a[i+3]) * int32(b[i+3])
	}
	return s0 + s1 + s2 + s3
}

// decode writes code × scale into v (len(code) ≥ len(v)).
func decode(v []float32, code []int8, scale float32) {
	code = code[:len(v)]
	for i, c := range code {
		v[i] = float32(c) * scale
	}
}
