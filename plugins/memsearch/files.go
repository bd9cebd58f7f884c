package memsearch

// Workspace file indexing (docs/design.md#search): files matching the
// configured globs under a base directory are cut into chunks of about 512
// tokens, each chunk is indexed as a search.Doc, and a periodic scan
// re-indexes changed files and drops deleted ones.
//
// REQ results must be events, so each chunk is a virtual event: kind 30078
// by the agent, d "snowclaw:file:<path>#<chunk>", the chunk text as
// content, the file's mtime (when the chunk was indexed) as created_at,
// tags snow:path and snow:chunk. It is signed by the agent key when served
// and never stored. Its id is the event id, so it is content-addressed: a
// changed chunk gets a new id and the old one is dropped.
//
// A chunk is the owner's and the agent's: nobody else finds it. The plugin
// wraps its store and read rule (Options.Store, Options.CanRead) so that
// Query serves chunks like stored events under that rule; see fileOverlay
// and fileCanRead.
//
// Which chunks of which file version are in the index is recorded in a
// manifest (files.json in the index directory), so a restart re-embeds
// nothing that did not change, and files deleted while the relay was down
// are still removed.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/search"
)

// Chunk sizes. Tokens are estimated from words with the usual rule of thumb
// for English text under BPE tokenizers (OpenAI: "100 tokens ≈ 75 words"),
// that is 0.75 words per token: a 512-token chunk is 384 words and the
// 64-token overlap between consecutive chunks is 48 words.
const (
	ChunkTokens   = 512
	OverlapTokens = 64
	wordsPerToken = 0.75
	chunkWords    = int(ChunkTokens * wordsPerToken)   // 384
	overlapWords  = int(OverlapTokens * wordsPerToken) // 48
)

const (
	// FileDPrefix starts the d tag of file chunk events:
	// "snowclaw:file:<path>#<chunk>".
	FileDPrefix = "snowclaw:file:"
	// DefaultIndexInterval is how often the workspace is rescanned.
	DefaultIndexInterval = 30 * time.Minute
	// maxFileBytes: larger files are left out (with a warning).
	maxFileBytes = 4 << 20
	// fileBatchChunks bounds the chunks embedded in one index call.
	fileBatchChunks = 256
	// maxCachedEvents bounds the signed chunk events kept for repeated hits.
	maxCachedEvents = 4096
	manifestName    = "files.json"
)

// chunkerVersion is recorded in the manifest; a change of the chunking
// re-chunks every file on the next scan.
var chunkerVersion = fmt.Sprintf("words:%d/%d", chunkWords, overlapWords)

// IsFileDoc reports whether an indexed doc is a workspace file chunk.
func IsFileDoc(d search.Doc) bool {
	return strings.HasPrefix(d.D, FileDPrefix) && len(d.Tags[snowclaw.TagPath]) > 0 && len(d.Tags[snowclaw.TagHash]) > 0
}

func fileD(rel string, n int) string { return FileDPrefix + rel + "#" + strconv.Itoa(n) }

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// FileScan tells what one scan of the workspace did.
type FileScan struct {
	Files     int // files matching the globs
	Indexed   int // files (re)indexed because they are new or changed
	Unchanged int // files skipped: same content as indexed
	Removed   int // files deleted, or no longer matching, whose chunks were dropped
	Skipped   int // files left out: too large, binary or unreadable
	Chunks    int // chunks embedded and indexed
}

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

type chunkRef struct {
	rel string
	n   int
}

// fileIndexer is the plugin's workspace file state.
type fileIndexer struct {
	dir      string // absolute base directory
	globs    []glob
	interval time.Duration
	owner    string // hex, may be ""
	agent    string // hex, derived from the agent secret
	secret   string

	scanMu  sync.Mutex        // one scan at a time; the scanner alone writes man
	skipped map[string]string // path → why it was left out, logged once (under scanMu)

	mu   sync.RWMutex // guards man and byID (the scanner reads man without it)
	man  manifest
	byID map[string]chunkRef // current chunks of the manifest's files

	evMu   sync.Mutex
	events map[string]*nostr.Event // id → signed chunk event, for repeated hits

	cancel context.CancelFunc
	done   chan struct{}
}

// initFiles checks the file indexing options (bad globs, a missing
// workspace directory or no agent key are errors at Open) and puts the
// file overlay over the plugin's store and read rule.
func (p *Plugin) initFiles() error {
	o := p.opts
	if len(o.IndexedPaths) == 0 {
		return nil
	}
	fx := &fileIndexer{interval: o.IndexInterval, owner: o.OwnerPubkey, secret: o.AgentSecret,
		skipped: make(map[string]string), byID: make(map[string]chunkRef), events: make(map[string]*nostr.Event)}
	if fx.interval == 0 {
		fx.interval = DefaultIndexInterval
	}
	for _, s := range o.IndexedPaths {
		g, err := compileGlob(s)
		if err != nil {
			return fmt.Errorf("indexed_paths: %w", err)
		}
		fx.globs = append(fx.globs, g)
	}
	if o.AgentSecret == "" {
		return errors.New("indexed_paths: workspace files need the agent key to sign their search results")
	}
	pk, err := nostr.GetPublicKey(o.AgentSecret)
	if err != nil {
		return fmt.Errorf("indexed_paths: agent key: %w", err)
	}
	fx.agent = pk
	dir := o.FilesDir
	if dir == "" {
		dir = "."
	}
	if fx.dir, err = filepath.Abs(dir); err != nil {
		return fmt.Errorf("workspace directory %q: %w", dir, err)
	}
	st, err := os.Stat(fx.dir)
	if err != nil {
		return fmt.Errorf("workspace directory for indexed_paths: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("workspace directory for indexed_paths: %s is not a directory", fx.dir)
	}
	p.files = fx
	p.opts.Store = fileOverlay{Store: o.Store, p: p}
	p.opts.CanRead = p.fileCanRead(o.CanRead)
	return nil
}

// startFiles loads the manifest, scans the workspace once and starts the
// periodic rescan. A failed scan is logged, not fatal: the next one retries.
func (p *Plugin) startFiles(ctx context.Context) {
	fx := p.files
	if fx == nil {
		return
	}
	p.loadManifest()
	p.log.Info("indexing workspace files", "dir", fx.dir, "paths", p.opts.IndexedPaths, "interval", fx.interval)
	if _, err := p.ScanFiles(ctx); err != nil {
		p.log.Error("indexing workspace files", "dir", fx.dir, "err", err)
	}
	if fx.interval < 0 {
		return
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	fx.cancel, fx.done = cancel, make(chan struct{})
	go func() {
		defer close(fx.done)
		t := time.NewTicker(fx.interval)
		defer t.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-t.C:
				if _, err := p.ScanFiles(rctx); err != nil && rctx.Err() == nil {
					p.log.Error("re-indexing workspace files", "dir", fx.dir, "err", err)
				}
			}
		}
	}()
}

// stopFiles stops the periodic rescan and waits for a running one.
func (p *Plugin) stopFiles() {
	if fx := p.files; fx != nil && fx.cancel != nil {
		fx.cancel()
		<-fx.done
	}
}

func (p *Plugin) manifestPath() string {
	if p.opts.Search.Dir == "" {
		return "" // a RAM index: nothing to remember across restarts
	}
	return filepath.Join(p.opts.Search.Dir, manifestName)
}

// loadManifest reads files.json. A missing or unreadable one starts empty:
// chunks still in the index with the same id are then not embedded again.
func (p *Plugin) loadManifest() {
	fx := p.files
	m := manifest{Version: chunkerVersion, Files: map[string]*fileEntry{}, Pending: map[string][]string{}}
	if mp := p.manifestPath(); mp != "" {
		b, err := os.ReadFile(mp)
		var got manifest
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			p.log.Warn("reading the workspace file manifest; re-checking every file", "path", mp, "err", err)
		case json.Unmarshal(b, &got) != nil:
			p.log.Warn("workspace file manifest is corrupt; re-checking every file", "path", mp)
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
	fx.mu.Lock()
	fx.man = m
	clear(fx.byID)
	for rel, e := range m.Files {
		fx.indexEntry(rel, e)
	}
	fx.mu.Unlock()
}

// indexEntry and unindexEntry keep byID in step with man. Caller holds mu.
func (fx *fileIndexer) indexEntry(rel string, e *fileEntry) {
	for n, c := range e.Chunks {
		fx.byID[c.ID] = chunkRef{rel: rel, n: n}
	}
}

func (fx *fileIndexer) unindexEntry(e *fileEntry) {
	if e == nil {
		return
	}
	for _, c := range e.Chunks {
		delete(fx.byID, c.ID)
	}
}

// saveManifest writes files.json atomically. Caller holds scanMu.
func (p *Plugin) saveManifest() error {
	mp := p.manifestPath()
	if mp == "" {
		return nil
	}
	fx := p.files
	fx.mu.RLock()
	b, err := json.Marshal(fx.man)
	fx.mu.RUnlock()
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

// fileUpdate is one file to (re)index.
type fileUpdate struct {
	rel   string
	entry *fileEntry
	docs  []search.Doc // the chunks not in the index yet
	stale []string     // ids of chunks the new version no longer has
}

// ScanFiles brings the index up to date with the workspace: new and
// changed files are (re)indexed (a chunk whose text and place did not
// change is not embedded again), files deleted or no longer matching lose
// their chunks, unchanged files are skipped. It does nothing when no paths
// are indexed. The plugin calls it at Open and every IndexInterval; the
// agent may call it too.
func (p *Plugin) ScanFiles(ctx context.Context) (FileScan, error) {
	var sum FileScan
	fx := p.files
	if fx == nil {
		return sum, nil
	}
	fx.scanMu.Lock()
	defer fx.scanMu.Unlock()
	start := time.Now()
	paths, err := fx.list(p)
	if err != nil {
		return sum, fmt.Errorf("listing workspace files in %s: %w", fx.dir, err)
	}
	sum.Files = len(paths)
	seen := make(map[string]bool, len(paths))
	var batch []fileUpdate
	batchChunks := 0
	flush := func() error {
		err := p.applyFiles(ctx, batch)
		batch, batchChunks = batch[:0], 0
		return err
	}
	for _, rel := range paths {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		u, keep, err := p.prepareFile(rel)
		if err != nil {
			sum.Skipped++
			if keep {
				seen[rel] = true // a read error: keep what is indexed
			}
			if fx.skipped[rel] != err.Error() {
				fx.skipped[rel] = err.Error()
				p.log.Warn("workspace file left out of the index", "path", rel, "reason", err)
			}
			continue
		}
		delete(fx.skipped, rel)
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
	for rel := range fx.skipped {
		if !listed[rel] {
			delete(fx.skipped, rel) // gone: say it again if it comes back
		}
	}
	removed, err := p.removeFiles(ctx, seen)
	sum.Removed = removed
	if err != nil {
		return sum, err
	}
	attrs := []any{"dir", fx.dir, "files", sum.Files, "indexed", sum.Indexed, "unchanged", sum.Unchanged,
		"removed", sum.Removed, "skipped", sum.Skipped, "chunks_embedded", sum.Chunks, "took", time.Since(start).Round(time.Millisecond)}
	if sum.Indexed > 0 || sum.Removed > 0 {
		p.log.Info("workspace files indexed", attrs...)
	} else {
		p.log.Debug("workspace files unchanged", attrs...)
	}
	return sum, nil
}

// prepareFile reads one file and works out what to index: nil when the
// indexed version is current. keep tells, on error, whether the indexed
// version should stay (a passing read error) or go (too large, binary).
func (p *Plugin) prepareFile(rel string) (u *fileUpdate, keep bool, err error) {
	fx := p.files
	f, err := os.Open(filepath.Join(fx.dir, filepath.FromSlash(rel)))
	if err != nil {
		return nil, true, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, true, err
	}
	tooLarge := fmt.Errorf("larger than %d MiB", maxFileBytes>>20)
	if st.Size() > maxFileBytes {
		return nil, false, tooLarge
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
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
	old := fx.man.Files[rel] // the scanner alone writes the manifest
	pending := fx.man.Pending[rel]
	if old != nil && old.Hash == hash && len(pending) == 0 && p.chunksPresent(old.Chunks) {
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
		if old != nil && n < len(old.Chunks) && old.Chunks[n].Hash == h && p.present(old.Chunks[n].ID) {
			u.entry.Chunks[n] = old.Chunks[n] // same text at the same place
			kept[old.Chunks[n].ID] = true
			continue
		}
		evt := fx.chunkEvent(rel, n, c, mtime)
		rec := chunkRec{ID: evt.GetID(), Hash: h, CreatedAt: mtime}
		u.entry.Chunks[n] = rec
		kept[rec.ID] = true
		if !p.present(rec.ID) {
			u.docs = append(u.docs, fx.chunkDoc(rec, rel, n, c))
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
func (p *Plugin) chunksPresent(cs []chunkRec) bool {
	for _, c := range cs {
		if !p.present(c.ID) {
			return false
		}
	}
	return true
}

func (p *Plugin) present(id string) bool {
	_, ok := p.ix.Meta(id)
	return ok
}

// applyFiles indexes a batch of updated files: the manifest first records
// the new chunks as pending (so a crash leaves no chunk it does not know
// of), then the index changes, then the manifest records the new versions.
func (p *Plugin) applyFiles(ctx context.Context, batch []fileUpdate) error {
	if len(batch) == 0 {
		return nil
	}
	fx := p.files
	fx.mu.Lock()
	for _, u := range batch {
		ids := fx.man.Pending[u.rel]
		for _, c := range u.entry.Chunks {
			if !slices.Contains(ids, c.ID) {
				ids = append(ids, c.ID)
			}
		}
		fx.man.Pending[u.rel] = ids
	}
	fx.mu.Unlock()
	if err := p.saveManifest(); err != nil {
		return err
	}
	var docs []search.Doc
	var stale []string
	for _, u := range batch {
		docs = append(docs, u.docs...)
		stale = append(stale, u.stale...)
	}
	if err := p.ix.Index(ctx, docs...); err != nil {
		return fmt.Errorf("indexing workspace files: %w", err)
	}
	if len(stale) > 0 {
		// on failure the files stay pending: the next scan retries
		if err := p.ix.Remove(ctx, stale...); err != nil {
			return fmt.Errorf("removing old chunks of workspace files: %w", err)
		}
	}
	fx.mu.Lock()
	for _, u := range batch {
		fx.unindexEntry(fx.man.Files[u.rel])
		fx.man.Files[u.rel] = u.entry
		fx.indexEntry(u.rel, u.entry)
		delete(fx.man.Pending, u.rel)
	}
	fx.mu.Unlock()
	for _, u := range batch {
		p.log.Debug("workspace file indexed", "path", u.rel, "chunks", len(u.entry.Chunks), "embedded", len(u.docs))
	}
	return p.saveManifest()
}

// removeFiles drops the chunks of indexed files not seen by this scan.
func (p *Plugin) removeFiles(ctx context.Context, seen map[string]bool) (int, error) {
	fx := p.files
	gone := make(map[string]bool)
	var ids []string
	for rel, e := range fx.man.Files {
		if !seen[rel] {
			gone[rel] = true
			for _, c := range e.Chunks {
				ids = append(ids, c.ID)
			}
		}
	}
	for rel, pend := range fx.man.Pending {
		if !seen[rel] {
			gone[rel] = true
			ids = append(ids, pend...)
		}
	}
	if len(gone) == 0 {
		return 0, nil
	}
	if err := p.ix.Remove(ctx, ids...); err != nil {
		return 0, fmt.Errorf("removing chunks of deleted workspace files: %w", err)
	}
	fx.mu.Lock()
	for rel := range gone {
		fx.unindexEntry(fx.man.Files[rel])
		delete(fx.man.Files, rel)
		delete(fx.man.Pending, rel)
	}
	fx.mu.Unlock()
	for rel := range gone {
		p.log.Debug("workspace file removed from the index", "path", rel)
	}
	return len(gone), p.saveManifest()
}
