#include "textflag.h"

// func dotAVX2(a, b *float32, n int) float32
// Sum of a[i]*b[i] for i < n with 256-bit fused multiply-adds: four
// accumulators of eight lanes over blocks of 32, then blocks of 8, then
// single floats.
TEXT ·dotAVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

block32:
	CMPQ CX, $32
	JLT  block8
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  block32

block8:
	CMPQ CX, $8
	JLT  reduce
	VMOVUPS (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  block8

reduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0

single:
	TESTQ CX, CX
	JEQ   done
	VMOVSS (SI), X1
	VFMADD231SS (DI), X1, X0
	ADDQ $4, SI
	ADDQ $4, DI
	DECQ CX
	JMP  single

done:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	MOVL sub+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// func xgetbv0() (eax, edx uint32)
TEXT ·xgetbv0(SB), NOSPLIT, $0-8
	MOVL $0, CX
	XGETBV
	MOVL AX, eax+0(FP)
	MOVL DX, edx+4(FP)
	RET

// func dotInt8AVX2(a, b *int8, n int) int32
// Sum of a[i]*b[i] for i < n, n a multiple of 32: bytes widened to 16 bits,
// multiplied and summed in pairs to 32 bits (VPMADDWD; no overflow for
// n < 2^16 at |x| ≤ 127).
TEXT ·dotInt8AVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1

block32i:
	CMPQ CX, $32
	JLT  reducei
	VPMOVSXBW (SI), Y2
	VPMOVSXBW (DI), Y3
	VPMADDWD Y3, Y2, Y2
	VPADDD Y2, Y0, Y0
	VPMOVSXBW 16(SI), Y4
	VPMOVSXBW 16(DI), Y5
	VPMADDWD Y5, Y4, Y4
	VPADDD Y4, Y1, Y1
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $32, CX
	JMP  block32i

reducei:
	VPADDD Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0x4e, X0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0xb1, X0, X1
	VPADDD X1, X0, X0
	VMOVD X0, AX
	VZEROUPPER
	MOVL AX, ret+24(FP)
	RET

// func prefetchLines(p unsafe.Pointer, size int)
// Asks for the size bytes at p to be brought into the cache, one
// PREFETCHT0 per 64-byte line.
TEXT ·prefetchLines(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), BX
	MOVQ size+8(FP), R8

line:
	PREFETCHT0 (BX)
	ADDQ $64, BX
	SUBQ $64, R8
	JGT  line
	RET
