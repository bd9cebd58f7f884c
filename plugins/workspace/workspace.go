// Package workspace indexes the files of a workspace for search
// (docs/design.md#search): files matching the configured globs under a
// base directory are cut into chunks of about 512 tokens, each chunk is
// indexed as a search.Doc, and a periodic scan re-indexes changed files and
// drops deleted ones.
//
// REQ results must be events, so each chunk is a virtual event: kind 30078
// by the agent, d "snowclaw:file:<path>#<chunk>", the chunk text as
// content, the file's mtime (when the chunk was indexed) as created_at,
// tags snow:path and snow:chunk. It is signed by the agent key when served
// and never stored. Its id is the event id, so it is content-addressed: a
// changed chunk gets a new id and the old one is dropped.
//
// A chunk is the owner's and the agent's: nobody else finds it. The
// chunks' docs are a search scope of their own (Scope, readable as CanRead
// says), and the index that serves them puts Files over its store and its
// read rule (Store, ReadRule), so that chunks are served like stored events
// under that rule.
//
// The search index is its owner's (plugins/memsearch): Files only adds and
// removes its own docs, through the Index it is started with. Which chunks
// of which file version are in the index is recorded in a manifest
// (files.json in the index directory), so a restart re-embeds nothing that
// did not change, and files deleted while the relay was down are still
// removed.
package workspace

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"
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
	// DPrefix starts the d tag of file chunk events:
	// "snowclaw:file:<path>#<chunk>".
	DPrefix = "snowclaw:file:"
	// Scope is the search scope (search.Doc.Scope) of every chunk.
	Scope = "files"
	// DefaultInterval is how often the workspace is rescanned.
	DefaultInterval = 30 * time.Minute
	// maxFileBytes: larger files are left out (with a warning).
	maxFileBytes = 4 << 20
	// fileBatchChunks bounds the chunks embedded in one index call.
	fileBatchChunks = 256
	// maxCachedEvents bounds the signed chunk events kept for repeated hits.
	maxCachedEvents = 4096
)

// Index is what the workspace needs of the search index, which
// *search.Index has: adding and removing the chunks' docs, telling which
// are in it, and reading a chunk's text back to serve it.
type Index interface {
	Index(ctx context.Context, docs ...search.Doc) error
	Remove(ctx context.Context, ids ...string) error
	Meta(id string) (search.Doc, bool)
	Get(id string) (search.Doc, bool, error)
}

// Options configure the workspace files.
type Options struct {
	// Dir is the workspace ("" = the working directory); Paths are globs
	// relative to it (indexed_paths), where a "**" segment spans
	// directories.
	Dir   string
	Paths []string
	// Interval is how often changed files are re-indexed (0:
	// DefaultInterval; negative: only at Start and on Scan).
	Interval time.Duration
	// OwnerPubkey (hex, may be "") reads the chunks, with the agent.
	OwnerPubkey string
	// AgentSecret signs the chunk events; the agent is their author.
	AgentSecret string
	// IndexDir is the index's directory, where the manifest is kept; ""
	// (a RAM index): nothing is remembered across restarts.
	IndexDir string
	Logger   *slog.Logger
}

// Scan tells what one scan of the workspace did.
type Scan struct {
	Files     int // files matching the globs
	Indexed   int // files (re)indexed because they are new or changed
	Unchanged int // files skipped: same content as indexed
	Removed   int // files deleted, or no longer matching, whose chunks were dropped
	Skipped   int // files left out: too large, binary or unreadable
	Chunks    int // chunks embedded and indexed
}

// Files is the indexed workspace.
type Files struct {
	dir      string // absolute base directory
	paths    []string
	globs    []glob
	interval time.Duration
	owner    string // hex, may be ""
	agent    string // hex, derived from the agent secret
	secret   string
	indexDir string
	log      *slog.Logger

	scanMu  sync.Mutex        // one scan at a time; the scanner alone writes man
	ix      Index             // set by Start (under scanMu)
	skipped map[string]string // path → why it was left out, logged once (under scanMu)

	mu   sync.RWMutex // guards man and byID (the scanner reads man without it)
	man  manifest
	byID map[string]chunkRef // current chunks of the manifest's files

	evMu   sync.Mutex
	events map[string]*nostr.Event // id → signed chunk event, for repeated hits

	cancel context.CancelFunc
	done   chan struct{}
}

type chunkRef struct {
	rel string
	n   int
}

// New checks the options: bad globs, a missing workspace directory or no
// agent key are errors here, so that a relay configured wrongly does not
// start. Nothing is read or indexed before Start.
func New(o Options) (*Files, error) {
	if len(o.Paths) == 0 {
		return nil, errors.New("indexed_paths: no paths")
	}
	f := &Files{paths: o.Paths, interval: o.Interval, owner: o.OwnerPubkey, secret: o.AgentSecret, indexDir: o.IndexDir,
		log: o.Logger, skipped: make(map[string]string), byID: make(map[string]chunkRef), events: make(map[string]*nostr.Event)}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	if f.interval == 0 {
		f.interval = DefaultInterval
	}
	for _, s := range o.Paths {
		g, err := compileGlob(s)
		if err != nil {
			return nil, fmt.Errorf("indexed_paths: %w", err)
		}
		f.globs = append(f.globs, g)
	}
	if o.AgentSecret == "" {
		return nil, errors.New("indexed_paths: workspace files need the agent key to sign their search results")
	}
	pk, err := nostr.GetPublicKey(o.AgentSecret)
	if err != nil {
		return nil, fmt.Errorf("indexed_paths: agent key: %w", err)
	}
	f.agent = pk
	dir := o.Dir
	if dir == "" {
		dir = "."
	}
	if f.dir, err = filepath.Abs(dir); err != nil {
		return nil, fmt.Errorf("workspace directory %q: %w", dir, err)
	}
	st, err := os.Stat(f.dir)
	if err != nil {
		return nil, fmt.Errorf("workspace directory for indexed_paths: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("workspace directory for indexed_paths: %s is not a directory", f.dir)
	}
	return f, nil
}

// Start loads the manifest, scans the workspace once into ix and starts
// the periodic rescan. A failed scan is logged, not fatal: the next one
// retries.
func (f *Files) Start(ctx context.Context, ix Index) {
	f.scanMu.Lock()
	f.ix = ix
	f.loadManifest()
	f.scanMu.Unlock()
	f.log.Info("indexing workspace files", "dir", f.dir, "paths", f.paths, "interval", f.interval)
	if _, err := f.Scan(ctx); err != nil {
		f.log.Error("indexing workspace files", "dir", f.dir, "err", err)
	}
	if f.interval < 0 {
		return
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f.cancel, f.done = cancel, make(chan struct{})
	go func() {
		defer close(f.done)
		t := time.NewTicker(f.interval)
		defer t.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-t.C:
				if _, err := f.Scan(rctx); err != nil && rctx.Err() == nil {
					f.log.Error("re-indexing workspace files", "dir", f.dir, "err", err)
				}
			}
		}
	}()
}

// Stop stops the periodic rescan and waits for a running one.
func (f *Files) Stop() {
	if f.cancel != nil {
		f.cancel()
		<-f.done
	}
}
