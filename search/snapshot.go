package search

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/snowclaw/snowclaw/search/doclog"
	"github.com/snowclaw/snowclaw/search/vector"
)

// Past vector.Threshold docs the vectors sit in an HNSW graph, which a
// restart used to link again from the doc log's vectors: minutes of both
// cores at 100k docs, searches scanning meanwhile. Close now writes the
// graph beside the log (vector.Auto.Save, without the volatile docs'
// vectors, which never reach the disk) and Open loads it instead of adding
// the log's vectors, if it is the graph of exactly this log: same
// generation, length and record hash (doclog.Log's Size, Sum). Anything else —
// a crash after the log grew, a compaction, a damaged or foreign file —
// and the snapshot is ignored and the vectors come from the log as before.
// The file is removed once read: the log moves on from there.

// logTag is what a snapshot must match: the log's generation and identity.
func logTag(gen int, l *doclog.Log) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(gen))
	b = binary.LittleEndian.AppendUint64(b, uint64(l.Size))
	return binary.LittleEndian.AppendUint64(b, l.Sum)
}

// saveVectors writes s's graph, if it has one, for the next Open. The
// caller has flushed the log.
func (s *state) saveVectors(dir string) error {
	x, ok := s.vecs.(*vector.Auto)
	if !ok || s.log == nil || dir == "" {
		return nil
	}
	keep := func(id string) bool { d := s.docs[id]; return d != nil && !d.Volatile }
	err := writeAtomic(s.meta.SnapPath(dir), func(w io.Writer) (bool, error) { return x.Save(w, keep, logTag(s.meta.Gen, s.log)) })
	if err != nil {
		return fmt.Errorf("search: saving the vector graph: %w", err)
	}
	return nil
}

// writeAtomic writes path through a temp file, synced and renamed into
// place, unless write fails or reports it had nothing to write.
func writeAtomic(path string, write func(w io.Writer) (bool, error)) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	wrote, err := write(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil || !wrote {
		_ = os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// loadVectors reads the graph snapshot of generation m, if there is a
// usable one; its tag is checked against the log after the replay.
func (ix *Index) loadVectors(m indexMeta) (*vector.Auto, []byte) {
	f, err := os.Open(m.SnapPath(ix.dir))
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil
	}
	x, tag, err := vector.Load(f, fi.Size(), ix.emb.Dim(), graphThreshold, vector.DefaultParams)
	if err != nil {
		return nil, nil
	}
	return x, tag
}

// errStaleSnapshot: the snapshot was not of this log; Open replays again
// without it.
var errStaleSnapshot = errors.New("search: vector snapshot does not match the doc log")

// adoptVectors finishes a replay made over a loaded graph: the snapshot
// must be of this very log and hold a vector for exactly the docs that
// have one; the parts' vector sums, which the replay could not keep
// without the vectors of docs it removed, are summed again from it.
func (s *state) adoptVectors(tag []byte) error {
	if !bytes.Equal(tag, logTag(s.meta.Gen, s.log)) {
		return errStaleSnapshot
	}
	for _, p := range s.parts.byScope {
		clear(p.vsum)
		p.vn = 0
	}
	n := 0
	v := make([]float32, s.parts.dim)
	for id, d := range s.docs {
		ok := s.vecs.GetInto(id, v)
		if ok == d.KeywordOnly {
			return errStaleSnapshot
		}
		if ok {
			n++
			p := s.parts.byScope[d.Scope]
			addVec(p.vsum, v, 1)
			p.vn++
		}
	}
	if n != s.vecs.Len() {
		return errStaleSnapshot
	}
	s.fromSnap = true
	return nil
}
