package search

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/snowclaw/snowclaw/search/vector"
)

// Index adds or replaces docs. Embedding happens before any lock is taken,
// since an external embedder may be slow; the docs are searchable when
// Index returns.
func (ix *Index) Index(ctx context.Context, docs ...Doc) error {
	for start := 0; start < len(docs); start += batchSize {
		end := min(start+batchSize, len(docs))
		batch, vecs, an, err := ix.prepare(ctx, docs[start:end])
		if err != nil {
			return err
		}
		if err := ix.apply(batch, vecs, an); err != nil {
			return err
		}
	}
	return nil
}

// prepare validates, copies, analyses and embeds one batch outside any
// lock; a later doc with the same id wins, as if indexed after the earlier
// one.
func (ix *Index) prepare(ctx context.Context, docs []Doc) (batch []*Doc, vecs [][]float32, an []analysed, err error) {
	defer recoverAs(&err, "prepare")
	pos := make(map[string]int, len(docs))
	batch = make([]*Doc, 0, len(docs))
	for i := range docs {
		if docs[i].ID == "" {
			return nil, nil, nil, errors.New("search: doc without id")
		}
		d := cloneDoc(&docs[i])
		if p, ok := pos[d.ID]; ok {
			batch[p] = d
			continue
		}
		pos[d.ID] = len(batch)
		batch = append(batch, d)
	}
	// keyword-only docs (docs/design.md#search) get no vector
	var texts []string
	var embedded []int
	for i, d := range batch {
		if !d.KeywordOnly {
			texts = append(texts, EmbedText(d))
			embedded = append(embedded, i)
		}
	}
	vecs = make([][]float32, len(batch))
	if len(texts) > 0 {
		got, err := ix.emb.Embed(ctx, texts)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("search: embed with %s: %w", ix.emb.Name(), err)
		}
		if len(got) != len(texts) {
			return nil, nil, nil, fmt.Errorf("search: embedder %s returned %d vectors for %d texts", ix.emb.Name(), len(got), len(texts))
		}
		for j, v := range got {
			if len(v) != ix.emb.Dim() {
				return nil, nil, nil, fmt.Errorf("search: embedder %s returned dimension %d, want %d", ix.emb.Name(), len(v), ix.emb.Dim())
			}
			vector.Normalize(v)
			vecs[embedded[j]] = v
		}
	}
	an = analyseAll(ix.analyzer, batch) // on every core for a rebuild's batches
	return batch, vecs, an, nil
}

// EmbedText is what the embedder sees: the text and, for filed memories,
// their topic words.
func EmbedText(d *Doc) string {
	return indexedText(d)
}

func (ix *Index) apply(batch []*Doc, vecs [][]float32, an []analysed) (err error) {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	defer ix.recoverWrite(&err, "index")
	if ix.isClosed() {
		return ErrClosed
	}
	st := ix.st
	if err := st.writeStores(batch, vecs); err != nil {
		return err
	}
	var perr error
	ix.locked(func() {
		for i, d := range batch {
			fault("index", d.Text)
			if perr = st.putMaps(d, vecs[i], an[i]); perr != nil {
				ix.broken.Store(true) // half a batch is in: waits for Rebuild
				return
			}
		}
	})
	if perr != nil {
		return perr
	}
	if err := ix.recalibrate(context.Background(), st); err != nil {
		return err
	}
	return st.compactLogIfNeeded(ix.dir, ix.locked)
}

// Remove deletes docs by id; unknown ids are ignored.
func (ix *Index) Remove(ctx context.Context, ids ...string) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	defer ix.recoverWrite(&err, "remove")
	if ix.isClosed() {
		return ErrClosed
	}
	st := ix.st
	if err := st.deleteStores(ids); err != nil {
		return err
	}
	var derr error
	ix.locked(func() {
		for _, id := range ids {
			if d, ok := st.docs[id]; ok {
				if derr = st.dropMaps(d); derr != nil {
					ix.broken.Store(true) // the log says they are gone: waits for Rebuild
					return
				}
			}
		}
	})
	if derr != nil {
		return derr
	}
	return st.compactLogIfNeeded(ix.dir, ix.locked)
}

// locked runs f under the write lock, which a panic in f releases.
func (ix *Index) locked(f func()) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	f()
}

func (ix *Index) isClosed() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.closed
}

// Rebuild replaces the whole content of the index with docs, as when the
// relay reindexes from its events. The new index is built beside the old
// one, which keeps answering searches until the swap; writers wait.
// progress (may be nil) gets the number of docs done so far and -1 while the
// total is unknown, then (done, done) at the end.
func (ix *Index) Rebuild(ctx context.Context, docs func(yield func(Doc) error) error, progress func(done, total int)) (err error) {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	if ix.isClosed() {
		return ErrClosed
	}
	var st *state
	if ix.dir == "" {
		st = ix.newState()
	} else {
		st, err = ix.createState(ix.st.meta.Gen + 1)
	}
	if err != nil {
		return err
	}
	done := 0
	pending := make([]Doc, 0, batchSize)
	flush := func() error {
		batch, vecs, an, err := ix.prepare(ctx, pending)
		if err != nil {
			return err
		}
		if err := st.writeStores(batch, vecs); err != nil {
			return err
		}
		for i, d := range batch {
			if err := st.putMaps(d, vecs[i], an[i]); err != nil {
				return err
			}
		}
		done += len(pending)
		pending = pending[:0]
		if progress != nil {
			progress(done, -1)
		}
		return ctx.Err()
	}
	err = func() (err error) {
		defer recoverAs(&err, "rebuild")
		return docs(func(d Doc) error {
			pending = append(pending, d)
			if len(pending) == batchSize {
				return flush()
			}
			return nil
		})
	}()
	if err == nil && len(pending) > 0 {
		err = func() (err error) {
			defer recoverAs(&err, "rebuild")
			return flush()
		}()
	}
	if err == nil && ix.dir != "" {
		err = st.log.Flush()
		if err == nil {
			st.floor = 0 // a new index: calibrated afresh, meta written
			err = ix.recalibrate(ctx, st)
		}
	} else if err == nil {
		st.floor = 0
		err = ix.recalibrate(ctx, st)
	}
	if err != nil {
		_ = st.close()
		if ix.dir != "" {
			_ = os.Remove(st.meta.LogPath(ix.dir))
		}
		return fmt.Errorf("search: rebuild: %w", err)
	}
	ix.mu.Lock()
	old := ix.st
	ix.st = st
	ix.broken.Store(false)
	ix.mu.Unlock()
	cerr := old.close()
	if ix.dir != "" && old.meta.Gen > 0 {
		_ = os.Remove(old.meta.LogPath(ix.dir))
		_ = os.Remove(old.meta.SnapPath(ix.dir))
	}
	if progress != nil {
		progress(done, done)
	}
	return cerr
}

func cloneDoc(d *Doc) *Doc {
	c := *d
	if d.Tags != nil {
		c.Tags = make(map[string][]string, len(d.Tags))
		for k, v := range d.Tags {
			c.Tags[k] = append([]string(nil), v...)
		}
	}
	c.Supersedes = append([]string(nil), d.Supersedes...)
	c.off, c.tagv, c.spk, c.words, c.slot = 0, nil, "", 0, 0 // the index's own, set when indexed
	return &c
}
