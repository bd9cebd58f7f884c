package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

const manifestName = "files.json"

// chunkerVersion is recorded in the manifest; a change of the chunking
// re-chunks every file on the next scan.
var chunkerVersion = fmt.Sprintf("words:%d/%d", chunkWords, overlapWords)

// manifest records what the index holds of each file.
type manifest struct {
	Version string                `json:"version"`
	Files   map[string]*fileEntry `json:"files"`
	// Pending: files being re-indexed → ids of chunks of the new version,
	// which may be in the index already if the re-index was interrupted.
	Pending map[string][]string `json:"pending,omitempty"`
}

// fileEntry is one indexed file version. Entries are replaced, never
// changed in place.
type fileEntry struct {
	Hash   string     `json:"hash"`  // sha256 of the file's bytes; "" = re-index it
	MTime  int64      `json:"mtime"` // unix seconds, when it was indexed
	Chunks []chunkRec `json:"chunks"`
}

// chunkRec is one indexed chunk.
type chunkRec struct {
	ID        string `json:"id"`         // its event id, which is also its doc id
	Hash      string `json:"hash"`       // sha256 of its text
	CreatedAt int64  `json:"created_at"` // the file's mtime when the chunk was indexed
}

func (f *Files) manifestPath() string {
	if f.indexDir == "" {
		return "" // a RAM index: nothing to remember across restarts
	}
	return filepath.Join(f.indexDir, manifestName)
}

// loadManifest reads files.json. A missing or unreadable one starts empty:
// chunks still in the index with the same id are then not embedded again.
// Caller holds scanMu.
func (f *Files) loadManifest() {
	m := manifest{Version: chunkerVersion, Files: map[string]*fileEntry{}, Pending: map[string][]string{}}
	if mp := f.manifestPath(); mp != "" {
		b, err := os.ReadFile(mp)
		var got manifest
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			f.log.Warn("reading the workspace file manifest; re-checking every file", "path", mp, "err", err)
		case json.Unmarshal(b, &got) != nil:
			f.log.Warn("workspace file manifest is corrupt; re-checking every file", "path", mp)
		default:
			for rel, e := range got.Files {
				if e == nil {
					continue
				}
				if got.Version != chunkerVersion || len(got.Pending[rel]) > 0 {
					// chunked otherwise, or interrupted while re-indexing: redo it
					e = &fileEntry{MTime: e.MTime, Chunks: e.Chunks}
				}
				m.Files[rel] = e
			}
			for rel, ids := range got.Pending {
				m.Pending[rel] = ids
			}
		}
	}
	f.mu.Lock()
	f.man = m
	clear(f.byID)
	for rel, e := range m.Files {
		f.indexEntry(rel, e)
	}
	f.mu.Unlock()
}

// indexEntry and unindexEntry keep byID in step with man. Caller holds mu.
func (f *Files) indexEntry(rel string, e *fileEntry) {
	for n, c := range e.Chunks {
		f.byID[c.ID] = chunkRef{rel: rel, n: n}
	}
}

func (f *Files) unindexEntry(e *fileEntry) {
	if e == nil {
		return
	}
	for _, c := range e.Chunks {
		delete(f.byID, c.ID)
	}
}

// saveManifest writes files.json atomically. Caller holds scanMu.
func (f *Files) saveManifest() error {
	mp := f.manifestPath()
	if mp == "" {
		return nil
	}
	f.mu.RLock()
	b, err := json.Marshal(f.man)
	f.mu.RUnlock()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(mp), 0o700); err != nil {
		return err
	}
	tmp := mp + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("writing the workspace file manifest: %w", err)
	}
	if err := os.Rename(tmp, mp); err != nil {
		return fmt.Errorf("writing the workspace file manifest: %w", err)
	}
	return nil
}
