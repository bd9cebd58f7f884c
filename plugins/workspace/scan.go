package workspace

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/snowclaw/snowclaw/search"
)

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// fileUpdate is one file to (re)index.
type fileUpdate struct {
	rel   string
	entry *fileEntry
	docs  []search.Doc // the chunks not in the index yet
	stale []string     // ids of chunks the new version no longer has
}

// Scan brings the index up to date with the workspace: new and changed
// files are (re)indexed (a chunk whose text and place did not change is
// not embedded again), files deleted or no longer matching lose their
// chunks, unchanged files are skipped. Start runs it once and then every
// Interval; the agent may call it too. Before Start there is no index to
// scan into: an error.
func (f *Files) Scan(ctx context.Context) (Scan, error) {
	var sum Scan
	f.scanMu.Lock()
	defer f.scanMu.Unlock()
	if f.ix == nil {
		return sum, errors.New("workspace files: not started")
	}
	start := time.Now()
	paths, err := f.list()
	if err != nil {
		return sum, fmt.Errorf("listing workspace files in %s: %w", f.dir, err)
	}
	sum.Files = len(paths)
	seen := make(map[string]bool, len(paths))
	var batch []fileUpdate
	batchChunks := 0
	flush := func() error {
		err := f.applyFiles(ctx, batch)
		batch, batchChunks = batch[:0], 0
		return err
	}
	for _, rel := range paths {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		u, keep, err := f.prepareFile(rel)
		if err != nil {
			sum.Skipped++
			if keep {
				seen[rel] = true // a read error: keep what is indexed
			}
			if f.skipped[rel] != err.Error() {
				f.skipped[rel] = err.Error()
				f.log.Warn("workspace file left out of the index", "path", rel, "reason", err)
			}
			continue
		}
		delete(f.skipped, rel)
		seen[rel] = true
		if u == nil {
			sum.Unchanged++
			continue
		}
		sum.Indexed++
		sum.Chunks += len(u.docs)
		batch = append(batch, *u)
		batchChunks += len(u.docs)
		if batchChunks >= fileBatchChunks {
			if err := flush(); err != nil {
				return sum, err
			}
		}
	}
	if err := flush(); err != nil {
		return sum, err
	}
	listed := make(map[string]bool, len(paths))
	for _, rel := range paths {
		listed[rel] = true
	}
	for rel := range f.skipped {
		if !listed[rel] {
			delete(f.skipped, rel) // gone: say it again if it comes back
		}
	}
	removed, err := f.removeFiles(ctx, seen)
	sum.Removed = removed
	if err != nil {
		return sum, err
	}
	attrs := []any{"dir", f.dir, "files", sum.Files, "indexed", sum.Indexed, "unchanged", sum.Unchanged,
		"removed", sum.Removed, "skipped", sum.Skipped, "chunks_embedded", sum.Chunks, "took", time.Since(start).Round(time.Millisecond)}
	if sum.Indexed > 0 || sum.Removed > 0 {
		f.log.Info("workspace files indexed", attrs...)
	} else {
		f.log.Debug("workspace files unchanged", attrs...)
	}
	return sum, nil
}

// prepareFile reads one file and works out what to index: nil when the
// indexed version is current. keep tells, on error, whether the indexed
// version should stay (a passing read error) or go (too large, binary).
func (f *Files) prepareFile(rel string) (u *fileUpdate, keep bool, err error) {
	file, err := os.Open(filepath.Join(f.dir, filepath.FromSlash(rel)))
	if err != nil {
		return nil, true, err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return nil, true, err
	}
	tooLarge := fmt.Errorf("larger than %d MiB", maxFileBytes>>20)
	if st.Size() > maxFileBytes {
		return nil, false, tooLarge
	}
	b, err := io.ReadAll(io.LimitReader(file, maxFileBytes+1))
	if err != nil {
		return nil, true, err
	}
	if len(b) > maxFileBytes {
		return nil, false, tooLarge
	}
	if bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 {
		return nil, false, errors.New("binary file")
	}
	hash, mtime := sha256Hex(b), st.ModTime().Unix()
	old := f.man.Files[rel] // the scanner alone writes the manifest
	pending := f.man.Pending[rel]
	if old != nil && old.Hash == hash && len(pending) == 0 && f.chunksPresent(old.Chunks) {
		return nil, true, nil // touched or not, the same content: its chunks stay as they are
	}
	text := string(b)
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	chunks := chunkText(text, chunkWords, overlapWords)
	u = &fileUpdate{rel: rel, entry: &fileEntry{Hash: hash, MTime: mtime, Chunks: make([]chunkRec, len(chunks))}}
	kept := make(map[string]bool, len(chunks))
	for n, c := range chunks {
		h := sha256Hex([]byte(c))
		if old != nil && n < len(old.Chunks) && old.Chunks[n].Hash == h && f.present(old.Chunks[n].ID) {
			u.entry.Chunks[n] = old.Chunks[n] // same text at the same place
			kept[old.Chunks[n].ID] = true
			continue
		}
		evt := f.chunkEvent(rel, n, c, mtime)
		rec := chunkRec{ID: evt.GetID(), Hash: h, CreatedAt: mtime}
		u.entry.Chunks[n] = rec
		kept[rec.ID] = true
		if !f.present(rec.ID) {
			u.docs = append(u.docs, f.chunkDoc(rec, rel, n, c))
		}
	}
	if old != nil {
		for _, c := range old.Chunks {
			if !kept[c.ID] {
				u.stale = append(u.stale, c.ID)
			}
		}
	}
	for _, id := range pending {
		if !kept[id] {
			u.stale = append(u.stale, id)
		}
	}
	return u, true, nil
}

// chunksPresent: every chunk is in the index.
func (f *Files) chunksPresent(cs []chunkRec) bool {
	for _, c := range cs {
		if !f.present(c.ID) {
			return false
		}
	}
	return true
}

func (f *Files) present(id string) bool {
	_, ok := f.ix.Meta(id)
	return ok
}

// applyFiles indexes a batch of updated files: the manifest first records
// the new chunks as pending (so a crash leaves no chunk it does not know
// of), then the index changes, then the manifest records the new versions.
func (f *Files) applyFiles(ctx context.Context, batch []fileUpdate) error {
	if len(batch) == 0 {
		return nil
	}
	f.mu.Lock()
	for _, u := range batch {
		ids := f.man.Pending[u.rel]
		for _, c := range u.entry.Chunks {
			if !slices.Contains(ids, c.ID) {
				ids = append(ids, c.ID)
			}
		}
		f.man.Pending[u.rel] = ids
	}
	f.mu.Unlock()
	if err := f.saveManifest(); err != nil {
		return err
	}
	var docs []search.Doc
	var stale []string
	for _, u := range batch {
		docs = append(docs, u.docs...)
		stale = append(stale, u.stale...)
	}
	if err := f.ix.Index(ctx, docs...); err != nil {
		return fmt.Errorf("indexing workspace files: %w", err)
	}
	if len(stale) > 0 {
		// on failure the files stay pending: the next scan retries
		if err := f.ix.Remove(ctx, stale...); err != nil {
			return fmt.Errorf("removing old chunks of workspace files: %w", err)
		}
	}
	f.mu.Lock()
	for _, u := range batch {
		f.unindexEntry(f.man.Files[u.rel])
		f.man.Files[u.rel] = u.entry
		f.indexEntry(u.rel, u.entry)
		delete(f.man.Pending, u.rel)
	}
	f.mu.Unlock()
	for _, u := range batch {
		f.log.Debug("workspace file indexed", "path", u.rel, "chunks", len(u.entry.Chunks), "embedded", len(u.docs))
	}
	return f.saveManifest()
}

// removeFiles drops the chunks of indexed files not seen by this scan.
func (f *Files) removeFiles(ctx context.Context, seen map[string]bool) (int, error) {
	gone := make(map[string]bool)
	var ids []string
	for rel, e := range f.man.Files {
		if !seen[rel] {
			gone[rel] = true
			for _, c := range e.Chunks {
				ids = append(ids, c.ID)
			}
		}
	}
	for rel, pend := range f.man.Pending {
		if !seen[rel] {
			gone[rel] = true
			ids = append(ids, pend...)
		}
	}
	if len(gone) == 0 {
		return 0, nil
	}
	if err := f.ix.Remove(ctx, ids...); err != nil {
		return 0, fmt.Errorf("removing chunks of deleted workspace files: %w", err)
	}
	f.mu.Lock()
	for rel := range gone {
		f.unindexEntry(f.man.Files[rel])
		delete(f.man.Files, rel)
		delete(f.man.Pending, rel)
	}
	f.mu.Unlock()
	for rel := range gone {
		f.log.Debug("workspace file removed from the index", "path", rel)
	}
	return len(gone), f.saveManifest()
}
