package vector

import "unsafe"

// The graph index spends nearly all its time in dot products of 512-dim
// vectors; the plain Go loop does one float per instruction, the AVX2 kernel
// eight per fused multiply-add.

//go:noescape
func dotAVX2(a, b *float32, n int) float32

func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

func xgetbv0() (eax, edx uint32)

// hasAVX2 tells whether the CPU has AVX2 and FMA and the OS saves the YMM
// registers.
var hasAVX2 = detectAVX2()

func detectAVX2() bool {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const (
		fma     = 1 << 12
		osxsave = 1 << 27
		avx     = 1 << 28
	)
	if ecx1&(fma|osxsave|avx) != fma|osxsave|avx {
		return false
	}
	if xcr0, _ := xgetbv0(); xcr0&6 != 6 { // XMM and YMM state
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	return ebx7&(1<<5) != 0 // AVX2
}

// dotFast is dot with the SIMD kernel where the CPU has one. Its sums are
// rounded differently from Dot's, so scores that leave the package are
// recomputed with Dot.
func dotFast(a, b []float32) float32 {
	if hasAVX2 && len(a) > 0 {
		_ = b[len(a)-1]
		return dotAVX2(&a[0], &b[0], len(a))
	}
	return Dot(a, b)
}

//go:noescape
func dotInt8AVX2(a, b *int8, n int) int32

// dotInt8 is the dot product of two code vectors whose length is a
// multiple of 32.
func dotInt8(a, b []int8) int32 {
	if hasAVX2 && len(a) > 0 {
		_ = b[len(a)-1]
		return dotInt8AVX2(&a[0], &b[0], len(a))
	}
	return dotInt8Go(a, b)
}

// prefetchLines hints that the size (> 0) bytes at p will be read soon. A
// graph walk knows all the nodes it is about to compare before the first
// comparison; asking for their codes together overlaps their cache misses.
//
//go:noescape
func prefetchLines(p unsafe.Pointer, size int)

func (v navView) prefetch(rows []uint32) {
	for _, n := range rows {
		prefetchLines(unsafe.Pointer(unsafe.SliceData(v.code(n))), v.codes.width)
	}
}
