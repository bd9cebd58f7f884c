package search

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrNeedsRebuild reports an on-disk index that cannot be used as it is: it
// is missing parts, damaged, or was built with another embedder or format.
// The index is derived from stored events, so the caller wipes it (Wipe),
// opens it again and calls Rebuild.
var ErrNeedsRebuild = errors.New("search: index needs a rebuild")

// metaFile names the files of the current generation and the embedder that
// made the vectors. It is written last and replaced atomically, so it only
// ever points at complete files.
const metaFile = "meta.json"

// formatVersion changes whenever the on-disk layout or the analysis chain
// changes in a way that old indexes cannot follow. 2: no bleve directory
// (the keyword index is rebuilt in RAM from the doc log) and docs carry
// their Scope, which format 1 logs lack.
const formatVersion = 2

type indexMeta struct {
	Format   int    `json:"format"`
	Embedder string `json:"embedder"`
	Dim      int    `json:"dim"`
	Gen      int    `json:"gen"`
	// VectorFloor is the calibrated relevance floor of this embedder
	// (floor.go), FloorDocs the number of vectors it was calibrated on.
	VectorFloor float64 `json:"vector_floor,omitempty"`
	FloorDocs   int     `json:"floor_docs,omitempty"`
}

func (m indexMeta) logPath(dir string) string {
	return filepath.Join(dir, fmt.Sprintf("docs-%d.log", m.Gen))
}

func readMeta(dir string) (indexMeta, error) {
	var m indexMeta
	b, err := os.ReadFile(filepath.Join(dir, metaFile))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%w: %s: %v", ErrNeedsRebuild, metaFile, err)
	}
	return m, nil
}

// checkMeta compares the recorded index with what this process would build.
func checkMeta(m indexMeta, e Embedder) error {
	switch {
	case m.Format != formatVersion:
		return fmt.Errorf("%w: format %d, want %d", ErrNeedsRebuild, m.Format, formatVersion)
	case m.Embedder != e.Name() || m.Dim != e.Dim():
		return fmt.Errorf("%w: built with embedder %s/%d, configured %s/%d",
			ErrNeedsRebuild, m.Embedder, m.Dim, e.Name(), e.Dim())
	case m.Gen <= 0:
		return fmt.Errorf("%w: %s: bad generation", ErrNeedsRebuild, metaFile)
	}
	return nil
}

func writeMeta(dir string, m indexMeta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, metaFile+".tmp")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, metaFile))
}

// ownFile tells whether a directory entry is one of ours (bleve-* is what
// format 1 kept its keyword index in), so Wipe and the
// "is this a fresh directory" check never touch anything else in dir.
func ownFile(name string) bool {
	return name == metaFile || name == metaFile+".tmp" ||
		strings.HasPrefix(name, "bleve-") ||
		(strings.HasPrefix(name, "docs-") && (strings.HasSuffix(name, ".log") || strings.HasSuffix(name, ".log.tmp"))) ||
		(strings.HasPrefix(name, "vectors-") && (strings.HasSuffix(name, ".snap") || strings.HasSuffix(name, ".snap.tmp")))
}

// Wipe deletes the index files in dir (and nothing else there), so that
// Open starts afresh after ErrNeedsRebuild.
func Wipe(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if ownFile(e.Name()) {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// hasOwnFiles reports whether dir holds any index file.
func hasOwnFiles(dir string) (bool, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	for _, e := range ents {
		if ownFile(e.Name()) {
			return true, nil
		}
	}
	return false, nil
}
