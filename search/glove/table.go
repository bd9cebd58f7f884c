package glove

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
)

// The table (vectors.bin, written by ./gen) is read where it lies: the
// embedded bytes are never copied or parsed into maps, so loading it costs
// a header check and nothing in the heap, and only the pages of the words
// looked up are ever touched.
//
// Layout, little-endian:
//
//	magic "SCGLOVE1"
//	u32 dim, u32 n (words), u32 npc (principal components), u32 sourceWords
//	npc × dim f32        the common components, strongest first
//	(n+1) × u32          offsets of the words in the word blob
//	n × u32              each word's rank in the source's frequency order (0 = most frequent)
//	n × f32              each word's scale
//	n × dim i8           each word's 8-bit code: component = code × scale
//	word blob            the words, sorted bytewise, concatenated
//
// Words are sorted so a lookup is a binary search over the offsets.
const magic = "SCGLOVE1"

const headerLen = len(magic) + 16

// Table is a read-only view of an encoded table.
type Table struct {
	dim, n      int
	sourceWords int
	pcs         [][]float32
	offs        []byte // (n+1) × u32
	ranks       []byte // n × u32
	scales      []byte // n × f32
	codes       []byte // n × dim
	blob        []byte
}

// Parse checks b's header and section sizes and returns a view of b
// (b must not change afterwards).
func Parse(b []byte) (*Table, error) {
	if len(b) < headerLen || string(b[:len(magic)]) != magic {
		return nil, errors.New("glove: not a vector table")
	}
	u32 := func(off int) int { return int(binary.LittleEndian.Uint32(b[off:])) }
	t := &Table{dim: u32(8), n: u32(12), sourceWords: u32(20)}
	npc := u32(16)
	if t.dim <= 0 || t.dim > 4096 || t.n <= 0 || npc > t.dim || t.sourceWords < t.n {
		return nil, fmt.Errorf("glove: bad header: dim %d, %d words, %d components, %d source words", t.dim, t.n, npc, t.sourceWords)
	}
	at := headerLen
	take := func(size int) ([]byte, error) {
		if size < 0 || at+size > len(b) {
			return nil, errors.New("glove: table truncated")
		}
		s := b[at : at+size : at+size]
		at += size
		return s, nil
	}
	pcs, err := take(npc * t.dim * 4)
	if err != nil {
		return nil, err
	}
	for i := range npc {
		pc := make([]float32, t.dim)
		for j := range pc {
			pc[j] = math.Float32frombits(binary.LittleEndian.Uint32(pcs[4*(i*t.dim+j):]))
		}
		t.pcs = append(t.pcs, pc)
	}
	for _, s := range []struct {
		p    *[]byte
		size int
	}{{&t.offs, 4 * (t.n + 1)}, {&t.ranks, 4 * t.n}, {&t.scales, 4 * t.n}, {&t.codes, t.n * t.dim}} {
		if *s.p, err = take(s.size); err != nil {
			return nil, err
		}
	}
	t.blob = b[at:]
	if t.off(0) != 0 || t.off(t.n) != len(t.blob) {
		return nil, errors.New("glove: word offsets do not span the word blob")
	}
	for i := range t.n {
		if t.off(i+1) < t.off(i) || i > 0 && bytes.Compare(t.word(i-1), t.word(i)) >= 0 {
			return nil, fmt.Errorf("glove: words not sorted at %d", i)
		}
	}
	return t, nil
}

func (t *Table) off(i int) int { return int(binary.LittleEndian.Uint32(t.offs[4*i:])) }

func (t *Table) word(i int) []byte { return t.blob[t.off(i):t.off(i+1)] }

// Dim is the vectors' dimension.
func (t *Table) Dim() int { return t.dim }

// Len is the number of words.
func (t *Table) Len() int { return t.n }

// SourceWords is the size of the vocabulary the table was cut from.
func (t *Table) SourceWords() int { return t.sourceWords }

// Components are the common directions, strongest first.
func (t *Table) Components() [][]float32 { return t.pcs }

// Lookup finds w: its entry and its frequency rank in the source.
func (t *Table) Lookup(w string) (entry, rank int, ok bool) {
	i := sort.Search(t.n, func(i int) bool { return string(t.word(i)) >= w })
	if i == t.n || string(t.word(i)) != w {
		return 0, 0, false
	}
	return i, int(binary.LittleEndian.Uint32(t.ranks[4*i:])), true
}

// AddTo adds weight × the entry's vector to acc (len(acc) ≥ Dim).
func (t *Table) AddTo(acc []float64, entry int, weight float64) {
	s := weight * float64(math.Float32frombits(binary.LittleEndian.Uint32(t.scales[4*entry:])))
	code := t.codes[entry*t.dim : (entry+1)*t.dim]
	for j, c := range code {
		acc[j] += s * float64(int8(c))
	}
}

// Entry is one word of a table to write.
type Entry struct {
	Word string
	Rank int       // in the source's frequency order, 0 the most frequent
	Vec  []float32 // Dim components
}

// Write encodes a table: the entries (any order; words distinct), the
// common components and the source vocabulary's size.
func Write(w io.Writer, dim, sourceWords int, pcs [][]float32, entries []Entry) error {
	es := append([]Entry(nil), entries...)
	sort.Slice(es, func(i, j int) bool { return es[i].Word < es[j].Word })
	for i := range es {
		if len(es[i].Vec) != dim {
			return fmt.Errorf("glove: %q has %d components, want %d", es[i].Word, len(es[i].Vec), dim)
		}
		if i > 0 && es[i].Word == es[i-1].Word {
			return fmt.Errorf("glove: %q twice", es[i].Word)
		}
	}
	var buf bytes.Buffer
	put := func(v uint32) { _ = binary.Write(&buf, binary.LittleEndian, v) }
	buf.WriteString(magic)
	put(uint32(dim))
	put(uint32(len(es)))
	put(uint32(len(pcs)))
	put(uint32(sourceWords))
	for _, pc := range pcs {
		for _, x := range pc {
			put(math.Float32bits(x))
		}
	}
	off := 0
	for _, e := range es {
		put(uint32(off))
		off += len(e.Word)
	}
	put(uint32(off))
	for _, e := range es {
		put(uint32(e.Rank))
	}
	codes := make([]byte, 0, len(es)*dim)
	for _, e := range es {
		scale, code := Quantize(e.Vec)
		put(math.Float32bits(scale))
		for _, c := range code {
			codes = append(codes, byte(c))
		}
	}
	buf.Write(codes)
	for _, e := range es {
		buf.WriteString(e.Word)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// Quantize is a vector's 8-bit code and scale: each component divided by
// the largest magnitude, times 127, rounded; component ≈ code × scale.
func Quantize(v []float32) (float32, []int8) {
	var m float32
	for _, x := range v {
		m = max(m, x, -x)
	}
	code := make([]int8, len(v))
	if !(m > 0) {
		return 0, code
	}
	for i, x := range v {
		code[i] = int8(math.Round(float64(x * 127 / m)))
	}
	return m / 127, code
}

// At is entry i (in the table's order, by word): its word and its rank.
func (t *Table) At(i int) (string, int) {
	return string(t.word(i)), int(binary.LittleEndian.Uint32(t.ranks[4*i:]))
}
