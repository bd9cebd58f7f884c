//go:build !amd64

package vector

// dotFast is dot; only amd64 has a SIMD kernel.
func dotFast(a, b []float32) float32 { return Dot(a, b) }

func dotInt8(a, b []int8) int32 { return dotInt8Go(a, b) }

func (v navView) prefetch(rows []uint32) {}
