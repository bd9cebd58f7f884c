package vector

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math/rand"
	"slices"
	"sync"
	"unsafe"
)

// A snapshot is the graph index as it stands, written when its owner
// closes so that the next open loads the links instead of linking every
// node again (minutes of both cores at 100k vectors). Only a graph is
// saved: below Threshold the flat index is rebuilt from the vectors at
// once. The owner decides whether a snapshot still matches its data; the
// file itself is checked end to end (a CRC-32C trailer), and anything that
// does not add up is ErrSnapshot, never a half-loaded index.
//
//	snapshot = magic tag header body crc32c(all before)
//	tag      = u32 len, bytes (the owner's)
//	header   = dim M m0 stride efC efS scan seed nodes built entry top nDead (u64 each)
//	body     = ids (u32 len, bytes)… dead (byte)… codes (stride each)…
//	           scales (f32)… levels (byte, built)… link0 (u32, built×(m0+1))
//	           upper (u32, Σ level×(M+1)) sum (f64, dim)
//
// The magic names the format's version. Version 1 also held every vector
// in half precision; the graph no longer keeps those, and a version 1 file
// fails the magic check like any foreign file: its owner rebuilds the
// graph from its own record of the vectors, never reads one format as the
// other.
const snapshotMagic = "snowclaw-vectors-2\n"

// ErrSnapshot is a snapshot that cannot be loaded: damaged, truncated,
// or written with other parameters.
var ErrSnapshot = errors.New("vector: unusable snapshot")

// errSnapshotVersion is a snapshot in a format this build does not read:
// another version's, or not a snapshot at all. Load wraps it with
// ErrSnapshot.
var errSnapshotVersion = errors.New("not a snapshot of this version")

// maxSnapshotNodes bounds the node count a header may claim; the file's
// size bounds it further (Load), so a damaged count is refused before the
// checksum is reached instead of allocating what it says.
const maxSnapshotNodes = 1 << 31

var snapCRC = crc32.MakeTable(crc32.Castagnoli)

// Save writes the graph to w and tells whether there was one to write.
// Only the vectors keep takes are written: any other node (a removed one,
// or one its owner must not put on disk) is written dead, without its id
// or vector, and stays in the graph as a waypoint that no walk enters.
// tag is the owner's, handed back by Load (what the snapshot must match).
// Save stops the background worker first (after its current batch): the
// index must not be used after Save, which is for closing.
func (x *Auto) Save(w io.Writer, keep func(id string) bool, tag []byte) (bool, error) {
	if x.ann == nil || !littleEndian {
		return false, nil
	}
	a := x.ann
	a.mu.Lock()
	a.dropped = true
	for a.working {
		a.idle.Wait()
	}
	defer a.mu.Unlock()
	return true, a.g.save(w, keep, a.sum, tag)
}

func (g *hnswGraph) save(w io.Writer, keep func(string) bool, sum []float64, tag []byte) error {
	drop := make([]bool, g.len())
	nDead := 0
	sum = slices.Clone(sum)
	for n, id := range g.ids {
		if !g.dead[n] && !keep(id) {
			for j, x := range g.vec(n) {
				sum[j] -= float64(x)
			}
		}
		drop[n] = g.dead[n] || !keep(id)
		if drop[n] {
			nDead++
		}
	}
	crc := crc32.New(snapCRC)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<20)
	sw := &snapWriter{w: bw}
	sw.bytes([]byte(snapshotMagic))
	sw.u32(uint32(len(tag)))
	sw.bytes(tag)
	for _, v := range []int{g.dim, g.p.M, g.m0, g.stride, g.p.EfConstruction, g.p.EfSearch, g.p.ScanFactor,
		int(g.p.Seed), g.len(), g.built, int(g.entry), g.top, nDead} {
		sw.u64(uint64(v))
	}
	for n, id := range g.ids {
		if drop[n] {
			id = ""
		}
		sw.u32(uint32(len(id)))
		sw.bytes([]byte(id))
	}
	for _, d := range drop {
		sw.bool(d)
	}
	// a dropped node's code is zeros: nothing of its vector on disk
	zeroCode := make([]byte, g.stride)
	for n := range g.ids {
		if drop[n] {
			sw.bytes(zeroCode)
		} else {
			sw.bytes(asBytes(g.code(n)))
		}
	}
	for n := range g.ids {
		s := g.scales[n]
		if drop[n] {
			s = 0
		}
		sw.bytes(asBytes([]float32{s}))
	}
	sw.bytes(g.levels)
	g.link0.eachChunk(func(c []uint32) { sw.bytes(asBytes(c)) })
	sw.bytes(asBytes(g.upper)) // the nodes' lists in node order
	sw.bytes(asBytes(sum))
	if sw.err != nil {
		return sw.err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	var t [4]byte
	binary.LittleEndian.PutUint32(t[:], crc.Sum32())
	_, err := w.Write(t[:])
	return err
}

// Load reads a snapshot Save wrote for vectors of dim dimensions and
// returns the index it held, its worker started for any node not yet
// linked. threshold and p must be what the index is opened with (New:
// Threshold and DefaultParams); a snapshot made with other parameters is
// ErrSnapshot, since its graph would not be the one they build. tag is
// what Save was given. size is the snapshot's length in bytes: the node
// count its header claims must fit in it.
func Load(r io.Reader, size int64, dim, threshold int, p Params) (x *Auto, tag []byte, err error) {
	if !littleEndian {
		return nil, nil, fmt.Errorf("%w: not written on this machine", ErrSnapshot)
	}
	crc := crc32.New(snapCRC)
	sr := &snapReader{r: io.TeeReader(bufio.NewReaderSize(r, 1<<20), crc), crc: crc}
	magic := make([]byte, len(snapshotMagic))
	sr.read(magic)
	tl := sr.u32()
	if sr.err != nil {
		return nil, nil, fmt.Errorf("%w: bad header", ErrSnapshot)
	}
	if string(magic) != snapshotMagic {
		return nil, nil, fmt.Errorf("%w: %w", ErrSnapshot, errSnapshotVersion)
	}
	if tl > 1<<16 {
		return nil, nil, fmt.Errorf("%w: bad header", ErrSnapshot)
	}
	tag = make([]byte, tl)
	sr.read(tag)
	g, sum, err := loadGraph(sr, size, dim, p.valid())
	if err != nil {
		return nil, nil, err
	}
	want := crc.Sum32()
	var t [4]byte
	if _, err := io.ReadFull(sr.r, t[:]); err != nil || binary.LittleEndian.Uint32(t[:]) != want {
		return nil, nil, fmt.Errorf("%w: checksum", ErrSnapshot)
	}
	x = NewAuto(dim, threshold, p)
	a := &annIndex{dim: dim, p: g.p, g: g, pos: make(map[string]int, g.len()-g.nDead), sum: sum,
		stop: x.stop, compactMin: 1024, removed: -1}
	a.idle = sync.NewCond(&a.mu)
	for n, id := range g.ids {
		if !g.dead[n] {
			a.pos[id] = n
		}
	}
	if len(a.pos) != g.len()-g.nDead {
		return nil, nil, fmt.Errorf("%w: duplicate ids", ErrSnapshot)
	}
	x.flat, x.ann = nil, a
	a.mu.Lock()
	a.maybeCompact()
	a.kick()
	a.mu.Unlock()
	return x, tag, nil
}

func loadGraph(sr *snapReader, size int64, dim int, p Params) (*hnswGraph, []float64, error) {
	var h [13]uint64
	for i := range h {
		h[i] = sr.u64()
	}
	g := newHNSWGraph(dim, p)
	if sr.err != nil || h[0] != uint64(dim) || h[1] != uint64(g.p.M) || h[2] != uint64(g.m0) || h[3] != uint64(g.stride) ||
		h[4] != uint64(g.p.EfConstruction) || h[5] != uint64(g.p.EfSearch) || h[6] != uint64(g.p.ScanFactor) || h[7] != uint64(g.p.Seed) {
		return nil, nil, fmt.Errorf("%w: written with other parameters", ErrSnapshot)
	}
	n, built, entry, top, nDead := h[8], h[9], h[10], int64(h[11]), h[12]
	// every node takes at least its id length, dead flag, code and scale;
	// every linked one its level and layer-0 links
	perNode := uint64(4 + 1 + g.stride + 4)
	perLinked := uint64(1 + 4*(g.m0+1))
	if n > maxSnapshotNodes || n*perNode+built*perLinked > uint64(max(size, 0)) || built > n || nDead > n || (built > 0 && entry >= built) || top < -1 || top > hnswMaxLevel || (built == 0) != (top == -1) {
		return nil, nil, fmt.Errorf("%w: bad counts", ErrSnapshot)
	}
	g.ids = make([]string, 0, n)
	for range n {
		l := sr.u32()
		if sr.err != nil || l > 1<<16 {
			return nil, nil, fmt.Errorf("%w: bad id", ErrSnapshot)
		}
		b := make([]byte, l)
		sr.read(b)
		g.ids = append(g.ids, string(b))
	}
	g.dead = make([]bool, n)
	for i := range g.dead {
		g.dead[i] = sr.bool()
		if g.dead[i] {
			g.nDead++
		}
	}
	g.codes.growTo(int(n))
	g.codes.eachChunk(func(c []int8) { sr.read(asBytes(c)) })
	g.scales = make([]float32, n)
	sr.read(asBytes(g.scales))
	g.levels = make([]uint8, built)
	sr.read(g.levels)
	g.link0.growTo(int(built))
	g.link0.eachChunk(func(c []uint32) { sr.read(asBytes(c)) })
	if sr.err != nil || uint64(g.nDead) != nDead {
		return nil, nil, fmt.Errorf("%w: truncated", ErrSnapshot)
	}
	g.upperAt = make([]uint32, built)
	total := 0
	for i, l := range g.levels {
		if int64(l) > top || l > hnswMaxLevel {
			return nil, nil, fmt.Errorf("%w: bad level", ErrSnapshot)
		}
		g.upperAt[i] = uint32(total)
		total += int(l) * (g.p.M + 1)
	}
	g.upper = make([]uint32, total)
	sr.read(asBytes(g.upper))
	sum := make([]float64, dim)
	sr.read(asBytes(sum))
	if sr.err != nil {
		return nil, nil, fmt.Errorf("%w: truncated", ErrSnapshot)
	}
	g.built, g.entry, g.top = int(built), uint32(entry), int(top)
	if err := g.checkLinks(); err != nil {
		return nil, nil, err
	}
	// Levels are drawn in insertion order from the seeded generator: draw
	// the built nodes' again so the next node gets the level it would have.
	g.rng = rand.New(rand.NewSource(g.p.Seed))
	for range built {
		g.randomLevel()
	}
	return g, sum, nil
}

// checkLinks makes sure no link leads outside the graph, so a damaged
// file that passed the checksum by chance cannot make a walk index out of
// range.
func (g *hnswGraph) checkLinks() error {
	for n := range g.built {
		for l := 0; l <= int(g.levels[n]); l++ {
			var cnt int
			if l == 0 {
				cnt = int(g.link0.row(n)[0])
				if cnt > g.m0 {
					return fmt.Errorf("%w: bad links", ErrSnapshot)
				}
			} else {
				cnt = int(g.upper[int(g.upperAt[n])+(l-1)*(g.p.M+1)])
				if cnt > g.p.M {
					return fmt.Errorf("%w: bad links", ErrSnapshot)
				}
			}
			for _, nb := range g.links(uint32(n), l) {
				if int(nb) >= g.built || (l > 0 && int(g.levels[nb]) < l) {
					return fmt.Errorf("%w: bad links", ErrSnapshot)
				}
			}
		}
	}
	if g.built > 0 && int(g.levels[g.entry]) != g.top {
		return fmt.Errorf("%w: bad entry", ErrSnapshot)
	}
	return nil
}

// littleEndian: snapshots hold numbers as they sit in memory, which is
// the file's little-endian order only on such machines; others save none.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// asBytes views a slice of fixed-size numbers as its bytes in memory
// (see littleEndian).
func asBytes[T uint16 | uint32 | int8 | float32 | float64](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

type snapWriter struct {
	w   *bufio.Writer
	err error
	b   [8]byte
}

func (s *snapWriter) bytes(b []byte) {
	if s.err == nil {
		_, s.err = s.w.Write(b)
	}
}
func (s *snapWriter) u64(v uint64) { binary.LittleEndian.PutUint64(s.b[:], v); s.bytes(s.b[:8]) }
func (s *snapWriter) u32(v uint32) { binary.LittleEndian.PutUint32(s.b[:], v); s.bytes(s.b[:4]) }
func (s *snapWriter) bool(v bool) {
	s.b[0] = 0
	if v {
		s.b[0] = 1
	}
	s.bytes(s.b[:1])
}

type snapReader struct {
	r   io.Reader
	crc hash.Hash32
	err error
	b   [8]byte
}

func (s *snapReader) read(b []byte) {
	if s.err == nil {
		_, s.err = io.ReadFull(s.r, b)
	}
}
func (s *snapReader) u64() uint64 { s.read(s.b[:8]); return binary.LittleEndian.Uint64(s.b[:8]) }
func (s *snapReader) u32() uint32 { s.read(s.b[:4]); return binary.LittleEndian.Uint32(s.b[:4]) }
func (s *snapReader) bool() bool  { s.read(s.b[:1]); return s.b[0] == 1 }
