package vector

import "math"

// The graph index keeps its vectors in half precision (IEEE 754 binary16):
// 2 bytes a dimension instead of 4. At a million 512-dimensional vectors
// that is 1 GB instead of 2, the largest single part of the relay's RAM.
// The unit vectors' components (|x| ≤ 1, most near 1/√dim) keep 11
// significant bits, so a dot product moves by well under 1e-3
// (TestHalf_DotProductsClose): the scores the graph's candidates are
// ranked by are the dot products of the stored vectors (Get returns exactly
// those), within that of the exact ones (halfClose in the tests).

// toHalf rounds x to the nearest binary16 (ties to even); out-of-range
// values saturate to ±Inf, tiny ones become subnormal or zero.
func toHalf(x float32) uint16 {
	b := math.Float32bits(x)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23&0xff) - 127 + 15
	man := b & 0x7fffff
	switch {
	case b&0x7fffffff > 0x7f800000: // NaN
		return sign | 0x7e00
	case exp >= 0x1f: // overflow, or Inf
		return sign | 0x7c00
	case exp <= 0: // subnormal or zero
		if exp < -10 {
			return sign
		}
		man |= 0x800000
		shift := uint32(14 - exp)
		half := uint32(1) << (shift - 1)
		r := man >> shift
		if rem := man & (1<<shift - 1); rem > half || rem == half && r&1 == 1 {
			r++
		}
		return sign | uint16(r)
	}
	r := uint32(exp)<<10 | man>>13
	if rem := man & 0x1fff; rem > 0x1000 || rem == 0x1000 && r&1 == 1 {
		r++ // may carry into the exponent, which is still right (up to Inf)
	}
	return sign | uint16(r)
}

// fromHalf is the float32 value of h.
func fromHalf(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch exp {
	case 0:
		if man == 0 {
			return math.Float32frombits(sign)
		}
		// subnormal: normalise
		e := uint32(127 - 15 + 1)
		for man&0x400 == 0 {
			man <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (man&0x3ff)<<13)
	case 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
}

// putHalf writes v in half precision into dst (len(dst) ≥ len(v)).
func putHalf(dst []uint16, v []float32) {
	for i, x := range v {
		dst[i] = toHalf(x)
	}
}

// halfTable holds every half's float32 value (256 KB): decoding a stored
// vector, which ranking does for each candidate it scores (Get), is then
// one load per dimension instead of fromHalf's branches.
var halfTable = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for h := range t {
		t[h] = fromHalf(uint16(h))
	}
	return &t
}()

// getHalf writes the float32 values of h into dst.
func getHalf(dst []float32, h []uint16) {
	dst = dst[:len(h)]
	for i, x := range h {
		dst[i] = halfTable[x]
	}
}

// sameHalf tells whether v is stored as h (v rounds to h exactly).
func sameHalf(h []uint16, v []float32) bool {
	if len(h) != len(v) {
		return false
	}
	for i, x := range v {
		if toHalf(x) != h[i] {
			return false
		}
	}
	return true
}
