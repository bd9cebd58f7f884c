package memsearch

// Workspace file indexing (seed 001 §6, DESIGN.md §4): files matching the
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
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fiatjaf/eventstore"
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
	return strings.HasPrefix(d.D, FileDPrefix) && len(d.Tags["snow:path"]) > 0 && len(d.Tags["snow:hash"]) > 0
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
// agent may call it too (seed 001: "on heartbeat").
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
	_, ok := p.ix.Get(id)
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

// chunkEvent is the unsigned event of a chunk.
func (fx *fileIndexer) chunkEvent(rel string, n int, text string, createdAt int64) *nostr.Event {
	return &nostr.Event{
		PubKey:    fx.agent,
		Kind:      snowclaw.KindAppData,
		CreatedAt: nostr.Timestamp(createdAt),
		Tags:      nostr.Tags{{"d", fileD(rel, n)}, {"snow:path", rel}, {"snow:chunk", strconv.Itoa(n)}},
		Content:   text,
	}
}

// chunkDoc is the search doc of a chunk: the agent's, private tier (the
// agent and its owner), with the file's path words searchable too.
func (fx *fileIndexer) chunkDoc(rec chunkRec, rel string, n int, text string) search.Doc {
	d := fileD(rel, n)
	return search.Doc{
		ID:        rec.ID,
		Kind:      snowclaw.KindAppData,
		Pubkey:    fx.agent,
		CreatedAt: rec.CreatedAt,
		D:         d,
		Text:      text + pathSuffix(rel),
		Tags: map[string][]string{
			"d":          {d},
			"snow:path":  {rel},
			"snow:chunk": {strconv.Itoa(n)},
			"snow:hash":  {rec.Hash},
		},
		Tier:   string(snowclaw.TierPrivate),
		Source: fx.agent,
	}
}

// pathSuffix makes a file's path words ("rooms/dev-notes.md" → "rooms dev
// notes") findable; fileEvent cuts it off again.
func pathSuffix(rel string) string {
	p := strings.TrimSuffix(rel, path.Ext(rel))
	return "\n" + strings.Join(strings.FieldsFunc(p, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	}), " ")
}

// canRead: workspace files are read by the owner and the agent only.
func (fx *fileIndexer) canRead(reader string) bool {
	return reader != "" && (reader == fx.agent || reader == fx.owner)
}

// fileCanRead wraps the relay's read rule: a current file chunk is readable
// by the owner and the agent; an outdated one still in the index (the
// event Query rebuilds from its doc carries snow:hash) by nobody; anything
// else is the relay's business.
func (p *Plugin) fileCanRead(inner func(string, *nostr.Event) bool) func(string, *nostr.Event) bool {
	fx := p.files
	return func(reader string, evt *nostr.Event) bool {
		fx.mu.RLock()
		_, current := fx.byID[evt.ID]
		fx.mu.RUnlock()
		if current {
			return fx.canRead(reader)
		}
		if evt.Kind == snowclaw.KindAppData && evt.PubKey == fx.agent &&
			strings.HasPrefix(evt.Tags.GetD(), FileDPrefix) && evt.Tags.Find("snow:hash") != nil {
			return false
		}
		return inner != nil && inner(reader, evt)
	}
}

// fileEvent makes the signed event of a current chunk. Events are
// content-addressed, so a signed one is kept for later hits.
func (p *Plugin) fileEvent(id string) (*nostr.Event, bool) {
	fx := p.files
	fx.mu.RLock()
	ref, ok := fx.byID[id]
	fx.mu.RUnlock()
	if !ok {
		return nil, false
	}
	fx.evMu.Lock()
	evt := fx.events[id]
	fx.evMu.Unlock()
	if evt != nil {
		return cloneEvent(evt), true
	}
	d, ok := p.ix.Get(id)
	if !ok {
		return nil, false
	}
	evt = fx.chunkEvent(ref.rel, ref.n, strings.TrimSuffix(d.Text, pathSuffix(ref.rel)), d.CreatedAt)
	if err := evt.Sign(fx.secret); err != nil || evt.ID != id {
		p.log.Error("making the event of a workspace file chunk", "path", ref.rel, "chunk", ref.n, "id", id, "got", evt.ID, "err", err)
		return nil, false
	}
	fx.evMu.Lock()
	if len(fx.events) >= maxCachedEvents {
		clear(fx.events)
	}
	fx.events[id] = evt
	fx.evMu.Unlock()
	return cloneEvent(evt), true
}

func cloneEvent(evt *nostr.Event) *nostr.Event {
	c := *evt
	c.Tags = make(nostr.Tags, len(evt.Tags))
	for i, t := range evt.Tags {
		c.Tags[i] = slices.Clone(t)
	}
	return &c
}

// fileOverlay is the plugin's view of the event store: the stored events
// plus the file chunks as virtual events, which an ids query returns like
// stored ones (Query loads its hits so). Everything else goes to the store.
type fileOverlay struct {
	eventstore.Store
	p *Plugin
}

func (s fileOverlay) QueryEvents(ctx context.Context, f nostr.Filter) (chan *nostr.Event, error) {
	if len(f.IDs) == 0 {
		return s.Store.QueryEvents(ctx, f)
	}
	var stored []string
	var virtual []*nostr.Event
	for _, id := range f.IDs {
		if evt, ok := s.p.fileEvent(id); ok {
			if f.Matches(evt) {
				virtual = append(virtual, evt)
			}
		} else {
			stored = append(stored, id)
		}
	}
	if len(virtual) == 0 {
		return s.Store.QueryEvents(ctx, f)
	}
	var ch chan *nostr.Event
	if len(stored) > 0 {
		sf := f
		sf.IDs = stored
		var err error
		if ch, err = s.Store.QueryEvents(ctx, sf); err != nil {
			return nil, err
		}
	}
	out := make(chan *nostr.Event)
	go func() {
		defer close(out)
		if ch != nil {
			for evt := range ch {
				select {
				case out <- evt:
				case <-ctx.Done():
					for range ch {
					}
					return
				}
			}
		}
		for _, evt := range virtual {
			select {
			case out <- evt:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// list walks the workspace for files matching the globs, as sorted slash
// paths relative to it. Directories no glob can reach are not entered;
// symlinked files are followed, symlinked directories are not.
func (fx *fileIndexer) list(p *Plugin) ([]string, error) {
	var out []string
	err := filepath.WalkDir(fx.dir, func(full string, de fs.DirEntry, err error) error {
		if err != nil {
			if full == fx.dir {
				return err
			}
			p.log.Warn("walking the workspace", "path", full, "err", err)
			if de != nil && de.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if full == fx.dir {
			return nil
		}
		r, err := filepath.Rel(fx.dir, full)
		if err != nil {
			return nil
		}
		rel := filepath.ToSlash(r)
		segs := strings.Split(rel, "/")
		if de.IsDir() {
			for _, g := range fx.globs {
				if g.couldContain(segs) {
					return nil
				}
			}
			return fs.SkipDir
		}
		if !fx.matches(segs) {
			return nil
		}
		if de.Type()&fs.ModeSymlink != 0 {
			st, err := os.Stat(full)
			if err != nil || !st.Mode().IsRegular() {
				return nil
			}
		} else if !de.Type().IsRegular() {
			return nil
		}
		out = append(out, rel)
		return nil
	})
	slices.Sort(out)
	return out, err
}

func (fx *fileIndexer) matches(segs []string) bool {
	for _, g := range fx.globs {
		if g.match(segs) {
			return true
		}
	}
	return false
}

// glob is one indexed_paths pattern: slash-separated segments matched with
// path.Match, where a "**" segment spans any number of directories (none
// included). Names starting with "." are matched only by segments that
// start with "." too, so "**" does not wander into .git.
type glob struct {
	raw  string
	segs []string
}

func compileGlob(s string) (glob, error) {
	raw := s
	s = strings.TrimSpace(filepath.ToSlash(s))
	if s == "" {
		return glob{}, errors.New("empty pattern")
	}
	if path.IsAbs(s) || filepath.IsAbs(raw) {
		return glob{}, fmt.Errorf("%q: must be relative to the workspace directory", raw)
	}
	s = path.Clean(s)
	if s == ".." || strings.HasPrefix(s, "../") {
		return glob{}, fmt.Errorf("%q: must not leave the workspace directory", raw)
	}
	if s == "." {
		return glob{}, fmt.Errorf("%q: names no file", raw)
	}
	segs := strings.Split(s, "/")
	for _, seg := range segs {
		if seg == "**" {
			continue
		}
		if strings.Contains(seg, "**") {
			return glob{}, fmt.Errorf("%q: ** must be a whole path segment, as in docs/**/*.md", raw)
		}
		if _, err := path.Match(seg, ""); err != nil {
			return glob{}, fmt.Errorf("%q: %w", raw, err)
		}
	}
	if segs[len(segs)-1] == "**" {
		// "docs/**" means every file below docs
		segs = append(segs, "*")
	}
	return glob{raw: raw, segs: segs}, nil
}

func (g glob) match(name []string) bool { return matchSegs(g.segs, name) }

// couldContain: a file below directory dir may match.
func (g glob) couldContain(dir []string) bool { return prefixSegs(g.segs, dir) }

func matchSegs(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			if matchSegs(pat[1:], name) {
				return true
			}
			for len(name) > 0 && !hidden(name[0]) {
				name = name[1:]
				if matchSegs(pat[1:], name) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 || !matchSeg(pat[0], name[0]) {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

func prefixSegs(pat, dir []string) bool {
	if len(dir) == 0 {
		return true
	}
	if len(pat) <= 1 { // the last segment names files, not directories
		return false
	}
	if pat[0] == "**" {
		return prefixSegs(pat[1:], dir) || (!hidden(dir[0]) && prefixSegs(pat, dir[1:]))
	}
	return matchSeg(pat[0], dir[0]) && prefixSegs(pat[1:], dir[1:])
}

func matchSeg(pat, name string) bool {
	if hidden(name) && !strings.HasPrefix(pat, ".") {
		return false
	}
	ok, _ := path.Match(pat, name)
	return ok
}

func hidden(name string) bool { return strings.HasPrefix(name, ".") }

// chunkText cuts text into chunks of at most maxWords words. Each cut is
// made at the strongest boundary in the second half of the window: a
// paragraph (blank line or a Markdown heading), then a line, then a
// sentence end, else between words. Consecutive chunks share up to overlap
// words, the shared part starting at a line or sentence start when there is
// one. Chunks are verbatim slices of text; blank text has no chunks.
func chunkText(text string, maxWords, overlap int) []string {
	type word struct{ start, end, brk int } // brk: strength of the boundary before the word
	var ws []word
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if unicode.IsSpace(r) {
			i += n
			continue
		}
		j := i
		for j < len(text) {
			r, n := utf8.DecodeRuneInString(text[j:])
			if unicode.IsSpace(r) {
				break
			}
			j += n
		}
		w := word{start: i, end: j}
		if k := len(ws); k > 0 {
			gap := text[ws[k-1].end:i]
			nl := strings.Count(gap, "\n")
			switch {
			case nl >= 2 || (nl == 1 && text[i] == '#'):
				w.brk = 3
			case nl == 1:
				w.brk = 2
			case sentenceEnd(text[ws[k-1].start:ws[k-1].end]):
				w.brk = 1
			}
		}
		ws = append(ws, w)
		i = j
	}
	maxWords = max(maxWords, 1)
	minWords := max(maxWords/2, 1)
	overlap = max(min(overlap, minWords-1), 0) // each chunk moves on by at least one word
	var out []string
	for s := 0; s < len(ws); {
		if len(ws)-s <= maxWords {
			out = append(out, text[ws[s].start:ws[len(ws)-1].end])
			break
		}
		end, best := s+maxWords, -1
		for b := s + maxWords; b >= s+minWords; b-- {
			if ws[b].brk > best {
				end, best = b, ws[b].brk
			}
		}
		out = append(out, text[ws[s].start:ws[end-1].end])
		next := end - overlap
		for j := next; j < end; j++ {
			if ws[j].brk >= 1 {
				next = j
				break
			}
		}
		s = max(next, s+1)
	}
	return out
}

func sentenceEnd(w string) bool {
	w = strings.TrimRight(w, "\"')]*_`»”’")
	return strings.HasSuffix(w, ".") || strings.HasSuffix(w, "!") || strings.HasSuffix(w, "?")
}
