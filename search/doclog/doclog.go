// Package doclog is the search index's on-disk record of its docs: an
// append-only file of checksummed records, each a doc (as the index
// encodes it) and its vector, or a deletion. The index replays it on
// Open, appends to it as it indexes, reads one doc back by its record's
// offset (ReadPut) and has it rewritten (WriteAtomic) once removed or
// replaced records outweigh live ones. It knows nothing of what a doc
// holds.
package doclog

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
)

// The format:
//
//	file   = magic record*
//	record = u32 len | u32 crc32c(payload) | payload
//	payload= 'P' u32 jsonLen docJSON u32 dim dim×f32  (put)
//	       | 'D' id                                    (delete)
const Magic = "snowclaw-doclog-1\n"

var crcTable = crc32.MakeTable(crc32.Castagnoli)

const (
	opPut = 'P'
	opDel = 'D'
)

// maxRecord bounds a record so a damaged length field cannot make replay
// allocate gigabytes.
const maxRecord = 64 << 20

// ErrDamaged is any damage found in a log: it is derived data, and the
// index is rebuilt rather than partly loaded.
var ErrDamaged = errors.New("doc log damaged")

// Log is a doc log open for appending.
type Log struct {
	Path string
	f    *os.File
	w    *bufio.Writer
	Dead int // records that a later record overrides (the caller counts)
	buf  []byte
	// Size and Sum say which log this is: its length and a hash of every
	// record's header (whose checksum covers the payload). A graph
	// snapshot records them, and is used only by a log that still has
	// them (search/snapshot.go).
	Size int64
	Sum  uint64
}

// fnv64 offset basis and prime (FNV-1a).
const (
	sumBasis = 14695981039346656037
	sumPrime = 1099511628211
)

// note adds a record's header to the log's identity.
func (l *Log) note(hdr []byte, payload int) {
	for _, b := range hdr {
		l.Sum = (l.Sum ^ uint64(b)) * sumPrime
	}
	l.Size += int64(len(hdr) + payload)
}

// Create writes an empty log at path, replacing any file there.
func Create(path string) (*Log, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteString(Magic); err != nil {
		_ = f.Close()
		return nil, err
	}
	return &Log{Path: path, f: f, w: bufio.NewWriterSize(f, 1<<16), Size: int64(len(Magic)), Sum: sumBasis}, nil
}

// Replay reads every record of the log at path in order and opens it
// for appending. put gets each put record's number, where it starts (for
// ReadPut) and its payload (its own copy), for the caller to decode with
// DecodePut — on every core, batch by batch; del gets a delete record's
// id. An error from either stops the replay and is returned. Any damage
// is ErrDamaged: a partial replay would silently lose memories. records
// is the number of records read; those that are not the last put of a
// live doc are the log's dead ones (Log.Dead), which the caller counts.
func Replay(path string, put func(n int, off int64, payload []byte) error, del func(n int, id string) error) (l *Log, records int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<16)
	magic := make([]byte, len(Magic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != Magic {
		return nil, 0, fmt.Errorf("%w: bad header", ErrDamaged)
	}
	id := &Log{Size: int64(len(Magic)), Sum: sumBasis}
	var hdr [8]byte
	var payload []byte
	n := 0
	for ; ; n++ {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, 0, fmt.Errorf("%w: record %d: truncated", ErrDamaged, n)
		}
		size := binary.LittleEndian.Uint32(hdr[:4])
		if size == 0 || size > maxRecord {
			return nil, 0, fmt.Errorf("%w: record %d: bad length", ErrDamaged, n)
		}
		if cap(payload) < int(size) {
			payload = make([]byte, size)
		}
		payload = payload[:size]
		if _, err := io.ReadFull(r, payload); err != nil {
			return nil, 0, fmt.Errorf("%w: record %d: truncated", ErrDamaged, n)
		}
		if crc32.Checksum(payload, crcTable) != binary.LittleEndian.Uint32(hdr[4:]) {
			return nil, 0, fmt.Errorf("%w: record %d: checksum", ErrDamaged, n)
		}
		switch payload[0] {
		case opDel:
			err = del(n, string(payload[1:]))
		case opPut:
			err = put(n, id.Size, bytes.Clone(payload))
		default:
			err = fmt.Errorf("%w: record %d: unknown op %q", ErrDamaged, n, payload[0])
		}
		if err != nil {
			return nil, 0, err
		}
		id.note(hdr[:], len(payload))
	}
	af, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, 0, err
	}
	return &Log{Path: path, f: af, w: bufio.NewWriterSize(af, 1<<16), Size: id.Size, Sum: id.Sum}, n, nil
}

// Check reads the log at path up to size (the length of the log as its
// writer last flushed it) and checks every record's checksum, without
// decoding any: an index opened from its image (search/restore.go) has
// not read its log, and damage found later is found here rather than when
// a doc is read back. Damage is ErrDamaged; ctx stops it.
func Check(ctx context.Context, path string, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(io.LimitReader(f, size), 1<<20)
	magic := make([]byte, len(Magic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != Magic {
		return fmt.Errorf("%w: bad header", ErrDamaged)
	}
	var hdr [8]byte
	var payload []byte
	for n := 0; ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("%w: record %d: truncated", ErrDamaged, n)
		}
		size := binary.LittleEndian.Uint32(hdr[:4])
		if size == 0 || size > maxRecord {
			return fmt.Errorf("%w: record %d: bad length", ErrDamaged, n)
		}
		if cap(payload) < int(size) {
			payload = make([]byte, size)
		}
		payload = payload[:size]
		if _, err := io.ReadFull(r, payload); err != nil {
			return fmt.Errorf("%w: record %d: truncated", ErrDamaged, n)
		}
		if crc32.Checksum(payload, crcTable) != binary.LittleEndian.Uint32(hdr[4:]) {
			return fmt.Errorf("%w: record %d: checksum", ErrDamaged, n)
		}
	}
}

// DecodePut splits a put record's payload into the doc (as the caller
// encoded it) and its vector.
func DecodePut(p []byte) ([]byte, []float32, error) {
	if len(p) < 5 {
		return nil, nil, errors.New("short put")
	}
	jl := int(binary.LittleEndian.Uint32(p[1:5]))
	if jl > len(p)-9 {
		return nil, nil, errors.New("bad doc length")
	}
	doc := p[5 : 5+jl]
	rest := p[5+jl:]
	dim := int(binary.LittleEndian.Uint32(rest[:4]))
	rest = rest[4:]
	if len(rest) != 4*dim {
		return nil, nil, errors.New("bad vector length")
	}
	v := make([]float32, dim)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(rest[4*i:]))
	}
	return doc, v, nil
}

// AppendPut writes a put record of a doc (encoded by the caller) and its
// vector, and returns where it starts, for ReadPut.
func (l *Log) AppendPut(js []byte, v []float32) (int64, error) {
	p := l.buf[:0]
	p = append(p, opPut)
	p = binary.LittleEndian.AppendUint32(p, uint32(len(js)))
	p = append(p, js...)
	p = binary.LittleEndian.AppendUint32(p, uint32(len(v)))
	for _, x := range v {
		p = binary.LittleEndian.AppendUint32(p, math.Float32bits(x))
	}
	l.buf = p
	off := l.Size
	return off, l.write(p)
}

// AppendDel writes a delete record of id.
func (l *Log) AppendDel(id string) error {
	p := append(l.buf[:0], opDel)
	p = append(p, id...)
	l.buf = p
	l.Dead += 2 // the delete record and the put it cancels
	return l.write(p)
}

func (l *Log) write(p []byte) error {
	if len(p) > maxRecord {
		return fmt.Errorf("search: doc too large for the log (%d bytes)", len(p))
	}
	var hdr [8]byte
	binary.LittleEndian.PutUint32(hdr[:4], uint32(len(p)))
	binary.LittleEndian.PutUint32(hdr[4:], crc32.Checksum(p, crcTable))
	if _, err := l.w.Write(hdr[:]); err != nil {
		return err
	}
	if _, err := l.w.Write(p); err != nil {
		return err
	}
	l.note(hdr[:], len(p))
	return nil
}

// Flush hands buffered records to the OS. We do not fsync per batch: the
// index is derived data, and a crash shows up on Open as a torn record,
// which asks for a rebuild.
func (l *Log) Flush() error { return l.w.Flush() }

// Close flushes, syncs and closes the log.
func (l *Log) Close() error {
	err := l.w.Flush()
	if serr := l.f.Sync(); err == nil {
		err = serr
	}
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// WriteAtomic writes a fresh log holding exactly the given docs to a
// temp file, syncs it and renames it over path, so a crash leaves either the
// old log or the new one. It returns the new log's size and sum.
func WriteAtomic(path string, each func(put func(doc []byte, v []float32) (int64, error)) error) (int64, uint64, error) {
	tmp := path + ".tmp"
	l, err := Create(tmp)
	if err != nil {
		return 0, 0, err
	}
	if err := each(l.AppendPut); err != nil {
		_ = l.Close()
		_ = os.Remove(tmp)
		return 0, 0, err
	}
	if err := l.Close(); err != nil {
		_ = os.Remove(tmp)
		return 0, 0, err
	}
	return l.Size, l.Sum, os.Rename(tmp, path)
}

// ReadPut reads back the put record that starts at off (as AppendPut or
// Replay gave it) and returns its payload, checked; anything else there
// is ErrDamaged.
func ReadPut(r io.ReaderAt, off int64) ([]byte, error) {
	var hdr [8]byte
	if n, err := r.ReadAt(hdr[:], off); n != len(hdr) {
		return nil, fmt.Errorf("%w: record at %d: %v", ErrDamaged, off, err)
	}
	size := binary.LittleEndian.Uint32(hdr[:4])
	if size < 5 || size > maxRecord {
		return nil, fmt.Errorf("%w: record at %d: bad length", ErrDamaged, off)
	}
	p := make([]byte, size)
	if n, err := r.ReadAt(p, off+8); n != len(p) {
		return nil, fmt.Errorf("%w: record at %d: truncated: %v", ErrDamaged, off, err)
	}
	if crc32.Checksum(p, crcTable) != binary.LittleEndian.Uint32(hdr[4:]) {
		return nil, fmt.Errorf("%w: record at %d: checksum", ErrDamaged, off)
	}
	if p[0] != opPut {
		return nil, fmt.Errorf("%w: record at %d: not a put", ErrDamaged, off)
	}
	return p, nil
}

// OpenAppend opens the log at path for appending without replaying it,
// as a log of size and sum (what Size and Sum were when it was last
// closed); a file of another size is ErrDamaged.
func OpenAppend(path string, size int64, sum uint64) (*Log, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != size {
		_ = f.Close()
		return nil, fmt.Errorf("%w: not the log of size %d", ErrDamaged, size)
	}
	return &Log{Path: path, f: f, w: bufio.NewWriterSize(f, 1<<16), Size: size, Sum: sum}, nil
}

// Reopen makes l append to the file now at its path, a log of size and
// sum that WriteAtomic renamed there; the old file is closed.
func (l *Log) Reopen(size int64, sum uint64) error {
	_ = l.f.Close() // its inode is already replaced; nothing left to lose
	f, err := os.OpenFile(l.Path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	l.f = f
	l.w.Reset(f)
	l.Dead, l.Size, l.Sum = 0, size, sum
	return nil
}
