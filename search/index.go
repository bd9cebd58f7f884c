package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2/analysis"

	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/internal/par"
	"github.com/snowclaw/snowclaw/search/doclog"
	"github.com/snowclaw/snowclaw/search/indexdir"
	"github.com/snowclaw/snowclaw/search/vector"
)

// Index is the memory search engine: BM25 (bleve) and vectors over docs,
// fused and trust-weighted. It is safe for concurrent use. Writers are
// serialised; searches run concurrently with each other and with writers.
type Index struct {
	dir      string
	opts     Options
	emb      Embedder
	analyzer analysis.Analyzer
	now      func() time.Time
	tune     tuning
	live     liveSources // the owner's live source weights (trust.go)

	writeMu sync.Mutex // serialises Index, Remove, Rebuild and Close

	mu       sync.RWMutex // guards st and closed; st's maps change under Lock
	st       *state
	closed   bool
	broken   atomic.Bool // a write panicked half-way: waits for Rebuild (fault.go)
	restored bool        // Open read a close-time image (Restored)
}

// ErrClosed is returned by calls on a closed Index.
var ErrClosed = errors.New("search: index closed")

// batchSize bounds one bleve batch and one embedder call, keeping memory
// flat when a rebuild streams many docs.
const batchSize = 1000

// Open opens the index in opts.Dir, creating it if the directory holds no
// index yet. An empty Dir keeps everything in RAM. A damaged or missing
// part, or a different embedder, yields an error wrapping ErrNeedsRebuild.
func Open(opts Options) (*Index, error) { return OpenContext(context.Background(), opts) }

// OpenContext is Open that stops, with ctx's error, when ctx ends.
func OpenContext(ctx context.Context, opts Options) (*Index, error) {
	opts, err := normalizeOptions(opts)
	if err != nil {
		return nil, err
	}
	a, err := queryAnalyzer()
	if err != nil {
		return nil, err
	}
	ix := &Index{dir: opts.Dir, opts: opts, emb: opts.Embedder, analyzer: a, now: time.Now, tune: defaultTuning}
	if ix.emb.Dim() <= 0 {
		return nil, fmt.Errorf("search: embedder %s has dimension %d", ix.emb.Name(), ix.emb.Dim())
	}
	if ix.dir == "" {
		ix.st = ix.newState()
		return ix, nil
	}
	if err := os.MkdirAll(ix.dir, 0o700); err != nil {
		return nil, err
	}
	m, err := indexdir.ReadMeta(ix.dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		own, herr := indexdir.HasOwnFiles(ix.dir)
		if herr != nil {
			return nil, herr
		}
		if own {
			return nil, fmt.Errorf("%w: %s missing", ErrNeedsRebuild, metaFile)
		}
		st, cerr := ix.createState(1)
		if cerr != nil {
			return nil, cerr
		}
		if err := indexdir.WriteMeta(ix.dir, st.meta); err != nil {
			_ = st.close()
			return nil, err
		}
		ix.st = st
		return ix, nil
	case err != nil:
		return nil, err
	}
	if err := indexdir.CheckMeta(m, ix.emb.Name(), ix.emb.Dim()); err != nil {
		return nil, err
	}
	st, err := ix.loadState(ctx, m)
	if err != nil {
		return nil, err
	}
	st.floor, st.floorDocs = m.VectorFloor, m.FloorDocs
	ix.st = st
	if err := ix.recalibrate(context.Background(), st); err != nil {
		_ = st.close()
		return nil, err
	}
	return ix, nil
}

func normalizeOptions(o Options) (Options, error) {
	if o.Embedder == nil {
		o.Embedder = NewBuiltinEmbedder()
	}
	if o.Progress == nil {
		o.Progress = func(done, total int64) {}
	}
	if o.BM25Weight == 0 && o.VectorWeight == 0 {
		o.BM25Weight, o.VectorWeight = 1, 1
	}
	if o.BM25Weight < 0 || o.VectorWeight < 0 {
		return o, errors.New("search: negative fusion weight")
	}
	if o.RRFK <= 0 {
		o.RRFK = defaultRRFK
	}
	if o.DefaultTrust <= 0 {
		o.DefaultTrust = 1
	}
	// Config files name sources by npub; docs carry hex.
	src := make(map[string]float64, len(o.Sources))
	for k, v := range o.Sources {
		if strings.HasPrefix(k, "npub1") {
			if pk, err := snowclaw.ParsePubkey(k); err == nil {
				k = pk
			}
		}
		src[strings.ToLower(k)] = v
	}
	o.Sources = src
	for _, t := range o.ModelTiers {
		if _, err := matchGlob(t.Pattern, ""); err != nil {
			return o, fmt.Errorf("search: model tier %q: %w", t.Pattern, err)
		}
	}
	return o, nil
}

func (ix *Index) newState() *state {
	st := newState(ix.emb.Dim(), ix.opts.Curators, ix.analyzer)
	st.floor = defaultFloor(ix.emb)
	return st
}

// createState makes a new, empty generation on disk.
func (ix *Index) createState(gen int) (*state, error) {
	st := ix.newState()
	st.meta = indexMeta{Format: indexdir.FormatVersion, Embedder: ix.emb.Name(), Dim: ix.emb.Dim(), Gen: gen}
	l, err := doclog.Create(st.meta.LogPath(ix.dir))
	if err != nil {
		return nil, err
	}
	st.log = l
	if err := st.openReader(l.Path); err != nil {
		_ = st.close()
		return nil, err
	}
	return st, nil
}

// loadState opens the generation named by m and replays its doc log.
// The keyword index is not on disk: Open decodes and analyses every doc
// again, in parallel batches.
// The vectors come from the graph snapshot when Close left one for this
// very log (snapshot.go), else from the log.
func (ix *Index) loadState(ctx context.Context, m indexMeta) (*state, error) {
	if st := ix.restoreState(m); st != nil {
		ix.restored = true
		return st, nil
	}
	snap, tag := ix.loadVectors(m)
	_ = os.Remove(m.SnapPath(ix.dir)) // read or useless: the log moves on
	if snap != nil {
		st, err := ix.replayState(ctx, m, snap)
		if err == nil {
			if err = st.adoptVectors(tag); err == nil {
				return st, nil
			}
			_ = st.close()
		}
		if !errors.Is(err, errStaleSnapshot) {
			return nil, err
		}
	}
	return ix.replayState(ctx, m, nil)
}

// replayState builds a state from the log; with snap, the vectors are
// snap's and the log's are not added (adoptVectors checks they agree).
func (ix *Index) replayState(ctx context.Context, m indexMeta, snap *vector.Auto) (st *state, err error) {
	defer recoverAs(&err, "open")
	st = ix.newState()
	st.meta = m
	if snap != nil {
		st.vecs, st.vecsLoaded = snap, true
	}
	// Puts are gathered in batches and decoded and analysed on every core;
	// a delete first applies the batch before it.
	type rec struct {
		n   int
		off int64
		p   []byte
		d   *Doc
		v   []float32
		a   analysed
		err error
	}
	var pend []rec
	apply := func() error {
		par.For(len(pend), func(i int) {
			r := &pend[i]
			d, v, err := decodePut(r.p)
			switch {
			case err != nil:
				r.err = fmt.Errorf("%w: doc log: record %d: %v", ErrNeedsRebuild, r.n, err)
				return
			case len(v) == 0 && d.KeywordOnly:
				v = nil
			case len(v) != m.Dim:
				r.err = fmt.Errorf("%w: doc log holds vectors of another dimension", ErrNeedsRebuild)
				return
			}
			d.Volatile, d.off = false, r.off
			r.d, r.v, r.a, r.p = &d, v, analyse(st.analyzer, &d), nil
		})
		for i := range pend {
			if pend[i].err != nil {
				return pend[i].err
			}
		}
		for _, r := range pend {
			if err := st.putMaps(r.d, r.v, r.a); err != nil {
				return err
			}
		}
		pend = pend[:0]
		return nil
	}
	if err := st.openReader(m.LogPath(ix.dir)); err != nil {
		_ = st.close()
		return nil, fmt.Errorf("%w: doc log: %v", ErrNeedsRebuild, err)
	}
	var size int64
	if fi, err := st.rd.Stat(); err == nil {
		size = fi.Size()
	}
	ix.opts.Progress(0, size)
	l, records, err := doclog.Replay(m.LogPath(ix.dir), func(n int, off int64, p []byte) error {
		pend = append(pend, rec{n: n, off: off, p: p})
		if len(pend) == 4*batchSize {
			ix.opts.Progress(off, size)
			if err := ctx.Err(); err != nil {
				return err
			}
			return apply()
		}
		return nil
	}, func(_ int, id string) error {
		if err := apply(); err != nil {
			return err
		}
		if d, ok := st.docs[id]; ok {
			return st.dropMaps(d)
		}
		return nil
	})
	if err == nil {
		err = apply()
	}
	if errors.Is(err, doclog.ErrDamaged) && !errors.Is(err, ErrNeedsRebuild) {
		err = fmt.Errorf("%w: %w", ErrNeedsRebuild, err)
	}
	if err != nil {
		_ = st.close()
		return nil, err
	}
	l.Dead = records - len(st.docs) // every record but each live doc's last put
	st.log = l
	ix.opts.Progress(size, size)
	st.vecsLoaded = false
	return st, nil
}

// Close flushes and closes the index. Volatile docs are gone afterwards.
func (ix *Index) Close() error {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return nil
	}
	ix.closed = true
	st := ix.st
	if st.log != nil {
		if err := st.log.Flush(); err != nil {
			_ = st.close()
			return err
		}
	}
	ierr := st.saveImage(ix.dir)
	serr := st.saveVectors(ix.dir)
	return errors.Join(st.close(), serr, ierr)
}

// Restored reports whether Open read the index back whole, as its last
// Close left it (restore.go), rather than from its doc log: a caller
// whose own state was closed with it may trust it is current.
func (ix *Index) Restored() bool { return ix.restored }

// CheckLog reads the doc log through once and reports damage
// (ErrNeedsRebuild), which a restored index (Restored) has not read yet.
func (ix *Index) CheckLog(ctx context.Context) error {
	var path string
	var size int64
	ix.writeMu.Lock() // the log is flushed up to its Size between writes
	if l := ix.st.log; l != nil {
		path, size = l.Path, l.Size
	}
	ix.writeMu.Unlock()
	if err := doclog.Check(ctx, path, size); path != "" && err != nil && ctx.Err() == nil {
		return fmt.Errorf("%w: %w", ErrNeedsRebuild, err)
	}
	return nil
}

// Count returns the number of indexed docs, volatile ones included.
func (ix *Index) Count() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return 0
	}
	return len(ix.st.docs)
}

// CountReadable is the number of indexed docs in the scopes readable
// admits (nil: all), for counts shown to a reader.
func (ix *Index) CountReadable(readable func(scope string) bool) int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return 0
	}
	return ix.st.parts.view(readable, ix.st.docs).docs
}

// Get returns the indexed doc with the given id, its text read back from
// the doc log. An error is the log's damage (ErrNeedsRebuild).
func (ix *Index) Get(id string) (Doc, bool, error) {
	return ix.get(id, true)
}

// Meta is Get without the text (Text is "" for a doc in the doc log):
// what a caller walking every stored event needs (its scope, address,
// tags) without reading each doc back.
func (ix *Index) Meta(id string) (Doc, bool) {
	d, ok, _ := ix.get(id, false) // nothing to read: no error
	return d, ok
}

// Scope is the scope of the doc indexed with this id and whether it is
// volatile, without copying the doc: what a walk over every stored event
// asks of each (memsearch's catch-up at start, a million times at 1M).
func (ix *Index) Scope(id string) (scope string, volatile, ok bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return "", false, false
	}
	d, ok := ix.st.docs[id]
	if !ok {
		return "", false, false
	}
	return d.Scope, d.Volatile, true
}

// VolatileIDs are the ids of the volatile docs indexed, which a caller
// may index again after a restart (they never reach the disk).
func (ix *Index) VolatileIDs() []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var ids []string
	for id, d := range ix.st.docs {
		if d.Volatile {
			ids = append(ids, id)
		}
	}
	return ids
}

// EachScope calls f with every scope that holds docs and one doc of it
// (without its text): what a caller needs to judge who may read a scope.
func (ix *Index) EachScope(f func(scope string, d Doc)) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	for scope, p := range ix.st.parts.byScope {
		for _, d := range p.slots {
			if d != nil {
				c, _ := ix.st.export(d, false) // no text: nothing to read
				f(scope, c)
				break
			}
		}
	}
}

// Versions are the ids of the docs indexed at address (Doc.Address).
func (ix *Index) Versions(address string) []string {
	k, err := parseAddrKey(address)
	if err != nil {
		return nil // no doc has it
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return nil
	}
	var ids []string
	ix.st.versionsAt(k, func(d *Doc) bool {
		ids = append(ids, d.ID)
		return true
	})
	return ids
}

func (ix *Index) get(id string, withText bool) (Doc, bool, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return Doc{}, false, nil
	}
	d, ok := ix.st.docs[id]
	if !ok {
		return Doc{}, false, nil
	}
	c, err := ix.st.export(d, withText)
	return c, err == nil, err
}
