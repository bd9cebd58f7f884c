// Package indexdir is the search index's directory: meta.json, which
// names the files of the current generation and the embedder that made
// the vectors, where each of those files lives, and which files in the
// directory are the index's (Wipe removes those and nothing else).
package indexdir

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

// MetaFile names the files of the current generation and the embedder that
// made the vectors. It is written last and replaced atomically, so it only
// ever points at complete files.
const MetaFile = "meta.json"

// FormatVersion changes whenever the on-disk layout or the analysis chain
// changes in a way that old indexes cannot follow. 2: no bleve directory
// (the keyword index is rebuilt in RAM from the doc log) and docs carry
// their Scope, which format 1 logs lack.
const FormatVersion = 2

// Meta is meta.json.
type Meta struct {
	Format   int    `json:"format"`
	Embedder string `json:"embedder"`
	Dim      int    `json:"dim"`
	Gen      int    `json:"gen"`
	// VectorFloor is the calibrated relevance floor of this embedder
	// (search/floor.go), FloorDocs the number of vectors it was calibrated on.
	VectorFloor float64 `json:"vector_floor,omitempty"`
	FloorDocs   int     `json:"floor_docs,omitempty"`
}

// LogPath is the generation's doc log (search/doclog).
func (m Meta) LogPath(dir string) string {
	return filepath.Join(dir, fmt.Sprintf("docs-%d.log", m.Gen))
}

// SnapPath is the generation's vector graph snapshot (search/vector).
func (m Meta) SnapPath(dir string) string {
	return filepath.Join(dir, fmt.Sprintf("vectors-%d.snap", m.Gen))
}

// ImagePath is the generation's image of docs and postings
// (search/docimage).
func (m Meta) ImagePath(dir string) string {
	return filepath.Join(dir, fmt.Sprintf("docs-%d.image", m.Gen))
}

// ReadMeta reads dir's meta.json.
func ReadMeta(dir string) (Meta, error) {
	var m Meta
	b, err := os.ReadFile(filepath.Join(dir, MetaFile))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%w: %s: %v", ErrNeedsRebuild, MetaFile, err)
	}
	return m, nil
}

// CheckMeta compares the recorded index with what this process would
// build with the embedder named embedder, of dim dimensions.
func CheckMeta(m Meta, embedder string, dim int) error {
	switch {
	case m.Format != FormatVersion:
		return fmt.Errorf("%w: format %d, want %d", ErrNeedsRebuild, m.Format, FormatVersion)
	case m.Embedder != embedder || m.Dim != dim:
		return fmt.Errorf("%w: built with embedder %s/%d, configured %s/%d",
			ErrNeedsRebuild, m.Embedder, m.Dim, embedder, dim)
	case m.Gen <= 0:
		return fmt.Errorf("%w: %s: bad generation", ErrNeedsRebuild, MetaFile)
	}
	return nil
}

// WriteMeta replaces dir's meta.json whole.
func WriteMeta(dir string, m Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, MetaFile+".tmp")
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
	return os.Rename(tmp, filepath.Join(dir, MetaFile))
}

// OwnFile tells whether a directory entry is one of ours (bleve-* is what
// format 1 kept its keyword index in), so Wipe and the
// "is this a fresh directory" check never touch anything else in dir.
func OwnFile(name string) bool {
	return name == MetaFile || name == MetaFile+".tmp" ||
		strings.HasPrefix(name, "bleve-") ||
		(strings.HasPrefix(name, "docs-") && (strings.HasSuffix(name, ".log") || strings.HasSuffix(name, ".log.tmp") ||
			strings.HasSuffix(name, ".image") || strings.HasSuffix(name, ".image.tmp"))) ||
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
		if OwnFile(e.Name()) {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// HasOwnFiles reports whether dir holds any index file.
func HasOwnFiles(dir string) (bool, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	for _, e := range ents {
		if OwnFile(e.Name()) {
			return true, nil
		}
	}
	return false, nil
}
