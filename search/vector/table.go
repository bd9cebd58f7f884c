package vector

// table is a growing list of fixed-width rows (a node's code, a node's
// layer-0 links) kept in chunks of tableRows rows. One slice would be
// copied whole each time it outgrew its capacity: at a million nodes the
// codes take 512 MB, and growing them by a quarter holds both copies, 1.15
// GB, for as long as the copy takes, which is what the relay's peak RSS
// (VmHWM) records; a slice also keeps up to a quarter of its length
// unused. A chunk is allocated once and never moves, so a view of the
// table taken under a lock stays valid for the rows it had.
type table[T int8 | uint32] struct {
	width  int
	chunks [][]T
	n      int // rows
}

// tableShift is log2 of the rows per chunk: 4096, 2 MB of 512-byte codes.
const tableShift = 12

const tableRows = 1 << tableShift

func newTable[T int8 | uint32](width int) table[T] { return table[T]{width: width} }

func (t *table[T]) len() int { return t.n }

// row is row i in place.
func (t *table[T]) row(i int) []T {
	c := t.chunks[i>>tableShift]
	o := (i & (tableRows - 1)) * t.width
	return c[o : o+t.width : o+t.width]
}

// grow appends a zero row and returns it.
func (t *table[T]) grow() []T {
	if t.n>>tableShift == len(t.chunks) {
		t.chunks = append(t.chunks, make([]T, tableRows*t.width))
	}
	t.n++
	return t.row(t.n - 1)
}

// growTo appends zero rows up to n rows in all, a chunk at a time (a
// snapshot's load, which then reads the rows in place: eachChunk).
func (t *table[T]) growTo(n int) {
	for t.n < n {
		if t.n>>tableShift == len(t.chunks) {
			t.chunks = append(t.chunks, make([]T, tableRows*t.width))
		}
		t.n = min(n, (t.n>>tableShift+1)<<tableShift)
	}
}

// eachChunk calls f with the rows of each chunk in order, as one slice.
func (t *table[T]) eachChunk(f func([]T)) {
	for c, chunk := range t.chunks {
		rows := min(tableRows, t.n-c<<tableShift)
		f(chunk[:rows*t.width])
	}
}
