package vector

import "math"

// The graph index keeps, next to each float vector, an 8-bit code of it:
// the vector divided by its largest magnitude, times 127, rounded. Walks
// and scans compare codes (a quarter of the bytes to read) and score only
// their best candidates on the floats.

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
