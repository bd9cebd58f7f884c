package vector

import (
	"testing"
	"unsafe"
)

// Rows keep their place as the table grows (no copy of what is stored,
// which is what keeps a million nodes' codes from being held twice), read
// back what was written across chunk boundaries, and growTo and eachChunk
// (a snapshot's load and save) see the same rows as row.
func TestTable_GrowsWithoutMoving(t *testing.T) {
	tb := newTable[uint32](3)
	first := tb.grow()
	first[0] = 7
	at := unsafe.SliceData(first)
	const n = 3*tableRows + 5
	for i := 1; i < n; i++ {
		r := tb.grow()
		if r[0] != 0 || len(r) != 3 || cap(r) != 3 {
			t.Fatalf("row %d: new row %v (cap %d)", i, r, cap(r))
		}
		r[0], r[2] = uint32(i), uint32(i)*2
	}
	if unsafe.SliceData(tb.row(0)) != at || tb.row(0)[0] != 7 {
		t.Fatal("row 0 moved or changed while the table grew")
	}
	for i := 1; i < n; i++ {
		if r := tb.row(i); r[0] != uint32(i) || r[1] != 0 || r[2] != uint32(i)*2 {
			t.Fatalf("row %d reads %v", i, r)
		}
	}
	var flat []uint32
	tb.eachChunk(func(c []uint32) { flat = append(flat, c...) })
	if len(flat) != 3*n || flat[3*(n-1)] != n-1 {
		t.Fatalf("eachChunk: %d values, last row %v", len(flat), flat[len(flat)-3:])
	}
	other := newTable[uint32](3)
	other.growTo(n)
	i := 0
	other.eachChunk(func(c []uint32) { i += copy(c, flat[i:]) })
	if other.len() != n || i != 3*n || other.row(n - 1)[2] != tb.row(n - 1)[2] || other.row(tableRows)[0] != tableRows {
		t.Fatalf("growTo(%d) then eachChunk: len %d, copied %d", n, other.len(), i)
	}
}
