package keyword

import (
	"encoding/binary"
	"errors"
	"math"
)

// A partition's postings are derived from the analysed texts of its docs;
// analysing a million texts again is most of what reopening an index
// cost. AppendEncoded writes them as they are, and DecodePostings reads
// them back: the same slots, lists and statistics, so a search ranks the
// same afterwards.
//
//	postings = slots (uvarint) flen (f64 bits, per slot) free (uvarint
//	           count, slots) terms (uvarint)
//	           term*: len bytes | maxTF | minLen (f64 bits) | n | (slot
//	           delta, tf)×n

// ErrDamaged is an encoding that does not decode.
var ErrDamaged = errors.New("keyword: damaged postings")

// AppendEncoded appends the postings to b.
func (p *Postings) AppendEncoded(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(p.flen)))
	for _, fl := range p.flen {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(fl))
	}
	b = binary.AppendUvarint(b, uint64(len(p.free)))
	for _, s := range p.free {
		b = binary.AppendUvarint(b, uint64(s))
	}
	b = binary.AppendUvarint(b, uint64(len(p.post)))
	for term, l := range p.post {
		b = binary.AppendUvarint(b, uint64(len(term)))
		b = append(b, term...)
		b = binary.AppendUvarint(b, uint64(l.maxTF))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(l.minLen))
		b = binary.AppendUvarint(b, uint64(len(l.p)))
		prev := uint32(0)
		for _, e := range l.p {
			b = binary.AppendUvarint(b, uint64(e.slot-prev))
			b = binary.AppendUvarint(b, uint64(e.tf))
			prev = e.slot
		}
	}
	return b
}

// DecodePostings reads what AppendEncoded wrote.
func DecodePostings(b []byte) (*Postings, error) {
	d := decoder{b: b}
	p := &Postings{}
	n := d.count(8)
	p.flen = make([]float64, n)
	for i := range p.flen {
		p.flen[i] = d.f64()
	}
	isFree := make([]bool, n)
	p.free = make([]uint32, d.count(1))
	for i := range p.free {
		s := d.slot(n)
		if d.err != nil || isFree[s] {
			return nil, ErrDamaged
		}
		p.free[i], isFree[s] = s, true
	}
	p.docs = n - len(p.free)
	nt := d.count(1)
	p.post = make(map[string]*termList, nt)
	for range nt {
		term := string(d.bytes(d.count(1)))
		l := &termList{maxTF: uint32(d.uvarint()), minLen: d.f64()}
		l.p = make([]posting, d.count(2))
		slot := uint64(0)
		for i := range l.p {
			slot += d.uvarint()
			if slot >= uint64(n) || isFree[slot] || i > 0 && slot == uint64(l.p[i-1].slot) {
				d.err = ErrDamaged
				return nil, d.err
			}
			l.p[i] = posting{slot: uint32(slot), tf: uint32(d.uvarint())}
		}
		if d.err != nil {
			return nil, d.err
		}
		p.post[term] = l
	}
	if d.err != nil || len(d.b) != 0 || len(p.post) != nt {
		return nil, ErrDamaged
	}
	return p, nil
}

// decoder reads a byte slice; the first error sticks, and every count is
// checked against what is left (each element takes at least min bytes),
// so damage never allocates more than the input's size.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err, d.b = ErrDamaged, nil
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *decoder) count(min int) int {
	x := d.uvarint()
	if x > uint64(len(d.b)/min) {
		d.err, d.b = ErrDamaged, nil
		return 0
	}
	return int(x)
}

func (d *decoder) slot(n int) uint32 {
	x := d.uvarint()
	if x >= uint64(n) {
		d.err = ErrDamaged
		return 0
	}
	return uint32(x)
}

func (d *decoder) f64() float64 {
	if len(d.b) < 8 {
		d.err, d.b = ErrDamaged, nil
		return 0
	}
	x := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return x
}

func (d *decoder) bytes(n int) []byte {
	x := d.b[:n] // count checked n against len(d.b)
	d.b = d.b[n:]
	return x
}
