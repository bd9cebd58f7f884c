package search

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
)

// The doc log is the on-disk record of the non-volatile docs and their
// vectors: an append-only file of checksummed records, replayed into RAM on
// Open. Appending keeps indexing cheap; a compaction rewrites it (to a temp
// file, then rename) once removed or replaced records outweigh live ones.
//
//	file   = magic record*
//	record = u32 len | u32 crc32c(payload) | payload
//	payload= 'P' u32 jsonLen docJSON u32 dim dim×f32  (put)
//	       | 'D' id                                    (delete)
const docLogMagic = "snowclaw-doclog-1\n"

var crcTable = crc32.MakeTable(crc32.Castagnoli)

const (
	opPut = 'P'
	opDel = 'D'
)

// maxRecord bounds a record so a damaged length field cannot make replay
// allocate gigabytes.
const maxRecord = 64 << 20

type docLog struct {
	path string
	f    *os.File
	w    *bufio.Writer
	dead int // records that a later record overrides
	buf  []byte
	// size and sum say which log this is: its length and a hash of every
	// record's header (whose checksum covers the payload). A graph
	// snapshot records them, and is used only by a log that still has
	// them (snapshot.go).
	size int64
	sum  uint64
}

// fnv64 offset basis and prime (FNV-1a).
const (
	sumBasis = 14695981039346656037
	sumPrime = 1099511628211
)

// note adds a record's header to the log's identity.
func (l *docLog) note(hdr []byte, payload int) {
	for _, b := range hdr {
		l.sum = (l.sum ^ uint64(b)) * sumPrime
	}
	l.size += int64(len(hdr) + payload)
}

// createDocLog writes an empty log at path, replacing any file there.
func createDocLog(path string) (*docLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteString(docLogMagic); err != nil {
		_ = f.Close()
		return nil, err
	}
	return &docLog{path: path, f: f, w: bufio.NewWriterSize(f, 1<<16), size: int64(len(docLogMagic)), sum: sumBasis}, nil
}

// replayDocLog reads every record of the log at path in order and opens it
// for appending. put gets each put record's number and payload (its own
// copy), for the caller to decode with decodePut — on every core, batch by
// batch; del gets a delete record's id. An error from either stops the
// replay and is returned. Any damage is ErrNeedsRebuild: the log is derived
// data and a partial replay would silently lose memories. records is the
// number of records read; those that are not the last put of a live doc
// are the log's dead ones (docLog.dead), which the caller counts.
func replayDocLog(path string, put func(n int, off int64, payload []byte) error, del func(n int, id string) error) (l *docLog, records int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: doc log: %v", ErrNeedsRebuild, err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<16)
	magic := make([]byte, len(docLogMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != docLogMagic {
		return nil, 0, fmt.Errorf("%w: doc log: bad header", ErrNeedsRebuild)
	}
	id := &docLog{size: int64(len(docLogMagic)), sum: sumBasis}
	var hdr [8]byte
	var payload []byte
	n := 0
	for ; ; n++ {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, 0, fmt.Errorf("%w: doc log: record %d: truncated", ErrNeedsRebuild, n)
		}
		size := binary.LittleEndian.Uint32(hdr[:4])
		if size == 0 || size > maxRecord {
			return nil, 0, fmt.Errorf("%w: doc log: record %d: bad length", ErrNeedsRebuild, n)
		}
		if cap(payload) < int(size) {
			payload = make([]byte, size)
		}
		payload = payload[:size]
		if _, err := io.ReadFull(r, payload); err != nil {
			return nil, 0, fmt.Errorf("%w: doc log: record %d: truncated", ErrNeedsRebuild, n)
		}
		if crc32.Checksum(payload, crcTable) != binary.LittleEndian.Uint32(hdr[4:]) {
			return nil, 0, fmt.Errorf("%w: doc log: record %d: checksum", ErrNeedsRebuild, n)
		}
		switch payload[0] {
		case opDel:
			err = del(n, string(payload[1:]))
		case opPut:
			err = put(n, id.size, bytes.Clone(payload))
		default:
			err = fmt.Errorf("%w: doc log: record %d: unknown op %q", ErrNeedsRebuild, n, payload[0])
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
	return &docLog{path: path, f: af, w: bufio.NewWriterSize(af, 1<<16), size: id.size, sum: id.sum}, n, nil
}

// decodePut decodes a put record's payload: the doc and its vector.
func decodePut(p []byte) (Doc, []float32, error) {
	var d Doc
	if len(p) < 5 {
		return d, nil, errors.New("short put")
	}
	jl := int(binary.LittleEndian.Uint32(p[1:5]))
	if jl > len(p)-9 {
		return d, nil, errors.New("bad doc length")
	}
	if err := json.Unmarshal(p[5:5+jl], &d); err != nil {
		return d, nil, err
	}
	rest := p[5+jl:]
	dim := int(binary.LittleEndian.Uint32(rest[:4]))
	rest = rest[4:]
	if len(rest) != 4*dim {
		return d, nil, errors.New("bad vector length")
	}
	v := make([]float32, dim)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(rest[4*i:]))
	}
	return d, v, nil
}

// appendPut writes d's put record and returns where it starts, for
// readDoc.
func (l *docLog) appendPut(d *Doc, v []float32) (int64, error) {
	js, err := json.Marshal(d)
	if err != nil {
		return 0, err
	}
	p := l.buf[:0]
	p = append(p, opPut)
	p = binary.LittleEndian.AppendUint32(p, uint32(len(js)))
	p = append(p, js...)
	p = binary.LittleEndian.AppendUint32(p, uint32(len(v)))
	for _, x := range v {
		p = binary.LittleEndian.AppendUint32(p, math.Float32bits(x))
	}
	l.buf = p
	off := l.size
	return off, l.write(p)
}

func (l *docLog) appendDel(id string) error {
	p := append(l.buf[:0], opDel)
	p = append(p, id...)
	l.buf = p
	l.dead += 2 // the delete record and the put it cancels
	return l.write(p)
}

func (l *docLog) write(p []byte) error {
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

// flush hands buffered records to the OS. We do not fsync per batch: the
// index is derived data, and a crash shows up on Open as a count mismatch
// with bleve, which asks for a rebuild.
func (l *docLog) flush() error { return l.w.Flush() }

func (l *docLog) close() error {
	err := l.w.Flush()
	if serr := l.f.Sync(); err == nil {
		err = serr
	}
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeDocLogAtomic writes a fresh log holding exactly the given docs to a
// temp file, syncs it and renames it over path, so a crash leaves either the
// old log or the new one. It returns the new log's size and sum.
func writeDocLogAtomic(path string, each func(put func(*Doc, []float32) (int64, error)) error) (int64, uint64, error) {
	tmp := path + ".tmp"
	l, err := createDocLog(tmp)
	if err != nil {
		return 0, 0, err
	}
	if err := each(l.appendPut); err != nil {
		_ = l.close()
		_ = os.Remove(tmp)
		return 0, 0, err
	}
	if err := l.close(); err != nil {
		_ = os.Remove(tmp)
		return 0, 0, err
	}
	return l.size, l.sum, os.Rename(tmp, path)
}
