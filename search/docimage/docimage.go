// Package docimage writes and reads the image of a search index's RAM
// state that the index leaves beside its doc log when it closes: every
// doc as the index keeps it (no text: that stays in the log) and each
// partition's keyword postings (search/keyword), so that the next open
// reads them back instead of decoding and analysing every doc in the log
// again. It knows nothing of what the fields mean; search/restore.go
// decides what goes in and whether an image still matches its log.
//
//	image  = magic tag(len, bytes) dim dead docs parts doc* part* crc32c
//	doc    = id kind pubkey created d topic tier group source model scope
//	         learnt speaker confidence supersedes version flags off words
//	         slot tags
//	part   = scope slots vn chatN chatW vsum(f64×dim) postings
//
// Numbers are uvarints (created_at a varint, floats their bits); strings
// that repeat across docs (authors, scopes, tiers, tag names, speakers)
// are written once and referred to by number afterwards. The checksum
// covers everything before it; a reader that finds damage anywhere
// returns ErrDamaged, and its caller reads the log instead.
package docimage

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
)

const magic = "snowclaw-docimage-1\n"

// ErrDamaged is an image that cannot be read back whole.
var ErrDamaged = errors.New("docimage: damaged image")

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Doc is one doc as an index keeps it in RAM.
type Doc struct {
	ID, Pubkey, D, Topic                      string
	Tier, Group, Source, Model, Scope, Learnt string
	Speaker                                   string
	Kind, Version                             int
	CreatedAt, Off                            int64
	Confidence                                float64
	Supersedes                                []string
	KeywordOnly                               bool
	Words                                     int32
	Slot                                      uint32   // in the part of its Scope
	Tags                                      []string // packed: name, value, … (search/tagpack)
}

// Part is one partition: how many slots it has (the docs say which
// they fill), its statistics and its encoded postings.
type Part struct {
	Scope     string
	Slots     int
	VN, ChatN int
	ChatW     int64
	VSum      []float64
	Postings  []byte // keyword.Postings.AppendEncoded
}

// Header is what an image says of itself.
type Header struct {
	Tag         []byte // the owner's: what the image must match
	Dim, Dead   int
	Docs, Parts int
	// Strings are the repeating strings read (Read fills it), which the
	// docs share: the owner may intern further strings against them.
	Strings []string
}

// Writer writes an image: the header, then exactly Docs docs, then Parts
// parts, then Close.
type Writer struct {
	w      *bufio.Writer
	crc    hash.Hash32
	strs   map[string]uint64
	shared func(tag string) bool
	buf    []byte
	err    error
}

// NewWriter starts an image on w. shared tells which tag names have
// values that repeat across docs.
func NewWriter(w io.Writer, h Header, shared func(tag string) bool) *Writer {
	x := &Writer{crc: crc32.New(crcTable), strs: make(map[string]uint64), shared: shared}
	x.w = bufio.NewWriterSize(io.MultiWriter(w, x.crc), 1<<20)
	b := append([]byte(magic), binary.AppendUvarint(nil, uint64(len(h.Tag)))...)
	b = append(b, h.Tag...)
	for _, n := range []int{h.Dim, h.Dead, h.Docs, h.Parts} {
		b = binary.AppendUvarint(b, uint64(n))
	}
	x.write(b)
	return x
}

func (x *Writer) write(b []byte) {
	if x.err == nil {
		_, x.err = x.w.Write(b)
	}
}

func raw(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// ref writes a repeating string: its number if written before, else 0
// and the string, which gets the next number.
func (x *Writer) ref(b []byte, s string) []byte {
	if n, ok := x.strs[s]; ok {
		return binary.AppendUvarint(b, n)
	}
	x.strs[s] = uint64(len(x.strs) + 1)
	return raw(binary.AppendUvarint(b, 0), s)
}

// Doc writes one doc.
func (x *Writer) Doc(d *Doc) {
	b := raw(x.buf[:0], d.ID)
	b = binary.AppendUvarint(b, uint64(d.Kind))
	b = x.ref(b, d.Pubkey)
	b = binary.AppendVarint(b, d.CreatedAt)
	b = raw(b, d.D)
	if len(d.Topic) <= len(d.D) && d.D[len(d.D)-len(d.Topic):] == d.Topic {
		b = binary.AppendUvarint(b, uint64(len(d.Topic))+1) // d's tail
	} else {
		b = raw(binary.AppendUvarint(b, 0), d.Topic)
	}
	for _, s := range []string{d.Tier, d.Group, d.Source, d.Model, d.Scope, d.Learnt, d.Speaker} {
		b = x.ref(b, s)
	}
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(d.Confidence))
	b = binary.AppendUvarint(b, uint64(len(d.Supersedes)))
	for _, s := range d.Supersedes {
		b = raw(b, s)
	}
	b = binary.AppendUvarint(b, uint64(d.Version))
	var flags uint64
	if d.KeywordOnly {
		flags = 1
	}
	b = binary.AppendUvarint(b, flags)
	b = binary.AppendUvarint(b, uint64(d.Off))
	b = binary.AppendUvarint(b, uint64(d.Words))
	b = binary.AppendUvarint(b, uint64(d.Slot))
	b = binary.AppendUvarint(b, uint64(len(d.Tags)/2))
	for i := 0; i+1 < len(d.Tags); i += 2 {
		name, v := d.Tags[i], d.Tags[i+1]
		b = x.ref(b, name)
		switch {
		case name == "d" && v == d.D:
			b = binary.AppendUvarint(b, 0)
		case x.shared(name):
			b = x.ref(binary.AppendUvarint(b, 1), v)
		default:
			b = raw(binary.AppendUvarint(b, 2), v)
		}
	}
	x.buf = b
	x.write(b)
}

// Part writes one partition.
func (x *Writer) Part(p *Part) {
	b := x.ref(x.buf[:0], p.Scope)
	for _, n := range []int{p.Slots, p.VN, p.ChatN, int(p.ChatW)} {
		b = binary.AppendUvarint(b, uint64(n))
	}
	for _, f := range p.VSum {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
	}
	b = binary.AppendUvarint(b, uint64(len(p.Postings)))
	x.buf = b
	x.write(b)
	x.write(p.Postings)
}

// Close writes the checksum and flushes; it returns the first error.
func (x *Writer) Close() error {
	if x.err == nil {
		x.err = x.w.Flush()
	}
	if x.err == nil {
		_, x.err = x.w.Write(binary.LittleEndian.AppendUint32(nil, x.crc.Sum32()))
		if x.err == nil {
			x.err = x.w.Flush()
		}
	}
	return x.err
}

// reader reads an image from memory; the first error sticks, and no
// count may claim more elements than the bytes left could hold, so
// damage never allocates more than the image's size.
type reader struct {
	b    []byte
	strs []string
	err  error
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = ErrDamaged
	}
	r.b = nil
}

func (r *reader) uvarint() uint64 {
	x, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return x
}

func (r *reader) varint() int64 {
	x, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return x
}

func (r *reader) full(n int) []byte {
	if n > len(r.b) {
		r.fail()
		return nil
	}
	b := r.b[:n:n]
	r.b = r.b[n:]
	return b
}

func (r *reader) count(min int) int {
	x := r.uvarint()
	if x > uint64(len(r.b)/min) {
		r.fail()
		return 0
	}
	return int(x)
}

func (r *reader) raw() string { return string(r.full(r.count(1))) }

func (r *reader) ref() string {
	n := r.uvarint()
	if n == 0 {
		s := r.raw()
		r.strs = append(r.strs, s)
		return s
	}
	if n > uint64(len(r.strs)) {
		r.fail()
		return ""
	}
	return r.strs[n-1]
}

func (r *reader) f64() float64 {
	b := r.full(8)
	if b == nil {
		return 0
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b))
}

// Read reads the image img (the whole file), handing each doc and part to
// doc and part (the records are reused: keep what they hold, not them)
// and, every few thousand docs, the bytes read so far to progress (may
// be nil). The checksum is checked first; anything else that does not
// add up is ErrDamaged too, and the caller must discard what it built.
// Postings alias img.
func Read(img []byte, doc func(*Doc) error, part func(*Part) error, progress func(done int64)) (Header, error) {
	var h Header
	if len(img) < len(magic)+4 || string(img[:len(magic)]) != magic {
		return h, fmt.Errorf("%w: not an image of this version", ErrDamaged)
	}
	body := img[:len(img)-4]
	if crc32.Checksum(body, crcTable) != binary.LittleEndian.Uint32(img[len(body):]) {
		return h, fmt.Errorf("%w: checksum", ErrDamaged)
	}
	r := &reader{b: body[len(magic):]}
	h.Tag = r.full(r.count(1))
	h.Dim, h.Dead = int(r.uvarint()), int(r.uvarint())
	h.Docs, h.Parts = r.count(8), r.count(1)
	if r.err != nil || h.Dim > 1<<16 {
		return h, ErrDamaged
	}
	var d Doc
	for i := range h.Docs {
		r.doc(&d)
		if r.err != nil {
			return h, r.err
		}
		if err := doc(&d); err != nil {
			return h, err
		}
		if progress != nil && i%4096 == 0 {
			progress(int64(len(img) - len(r.b)))
		}
	}
	p := Part{VSum: make([]float64, h.Dim)}
	for range h.Parts {
		p.Scope = r.ref()
		p.Slots = int(r.uvarint())
		p.VN, p.ChatN, p.ChatW = int(r.uvarint()), int(r.uvarint()), int64(r.uvarint())
		for i := range p.VSum {
			p.VSum[i] = r.f64()
		}
		p.Postings = r.full(r.count(1))
		if r.err != nil {
			return h, r.err
		}
		if err := part(&p); err != nil {
			return h, err
		}
	}
	if len(r.b) != 0 {
		return h, fmt.Errorf("%w: %d bytes left over", ErrDamaged, len(r.b))
	}
	h.Strings = r.strs
	if progress != nil {
		progress(int64(len(img)))
	}
	return h, nil
}

func (r *reader) doc(d *Doc) {
	d.ID = r.raw()
	d.Kind = int(r.uvarint())
	d.Pubkey = r.ref()
	d.CreatedAt = r.varint()
	d.D = r.raw()
	if n := r.uvarint(); n == 0 {
		d.Topic = r.raw()
	} else if n-1 <= uint64(len(d.D)) {
		d.Topic = d.D[len(d.D)-int(n-1):]
	} else {
		r.fail()
	}
	for _, s := range []*string{&d.Tier, &d.Group, &d.Source, &d.Model, &d.Scope, &d.Learnt, &d.Speaker} {
		*s = r.ref()
	}
	d.Confidence = r.f64()
	d.Supersedes = nil
	if n := r.count(1); n > 0 {
		d.Supersedes = make([]string, n)
		for i := range d.Supersedes {
			d.Supersedes[i] = r.raw()
		}
	}
	d.Version = int(r.uvarint())
	d.KeywordOnly = r.uvarint()&1 != 0
	d.Off, d.Words, d.Slot = int64(r.uvarint()), int32(r.uvarint()), uint32(r.uvarint())
	d.Tags = nil
	if n := r.count(2); n > 0 {
		d.Tags = make([]string, 0, 2*n)
		for range n {
			name := r.ref()
			var v string
			switch r.uvarint() {
			case 0:
				v = d.D
			case 1:
				v = r.ref()
			default:
				v = r.raw()
			}
			d.Tags = append(d.Tags, name, v)
		}
	}
}
