// Package memsearch is the bridge between the relay and the search
// package: it turns stored events into search documents as they are saved,
// replaced and deleted, answers NIP-50 REQ filters from the index under
// the relay's read rule, matches live search subscriptions, and rebuilds
// the index from the store when it is missing, corrupt or stale.
package memsearch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/relay/store"
	"github.com/snowclaw/snowclaw/search"
)

// Options configure the plugin.
type Options struct {
	Search       search.Options // Dir is the on-disk index directory
	DefaultLimit int            // results when the filter gives no limit (default search.DefaultLimit)
	MaxLimit     int            // cap on limit (default 100)
	AgentPubkey  string
	AgentSecret  string // decrypts private and internal memories into RAM
	// OpenGroup opens a group-sealed memory (plugins/groupcrypt) into RAM;
	// nil: such memories are not indexed.
	OpenGroup func(evt *nostr.Event) (string, error)
	Store     eventstore.Store
	// CanRead is the relay's read rule (docs/access.md).
	CanRead func(reader string, evt *nostr.Event) bool
	// Progress, when set, hears how far a rebuild got.
	Progress func(done, total int)
	// ForceRebuild throws the on-disk index away and builds it anew.
	ForceRebuild bool
	Logger       *slog.Logger

	// Workspace file indexing (docs/design.md#search, files.go), off while
	// IndexedPaths is empty. IndexedPaths are globs relative to FilesDir
	// ("" = the working directory); a "**" segment spans directories.
	// Changed files are re-indexed every IndexInterval (0: 30 minutes;
	// negative: only at Open and on ScanFiles). File chunks are readable by
	// OwnerPubkey (hex) and the agent only.
	OwnerPubkey   string
	FilesDir      string
	IndexedPaths  []string
	IndexInterval time.Duration

	// Feed is the shared store's change log (nil with badger), and
	// Position how far the relay has applied it (relay.FeedPosition):
	// the index records it and replays the log from it at Open (cursor.go).
	Feed     store.Feed
	Position func() int64
}

// Plugin owns the index.
type Plugin struct {
	opts     Options
	log      *slog.Logger
	ix       *search.Index
	q        *queue
	stopQ    chan struct{}
	stopOnce sync.Once
	files    *fileIndexer // nil when no workspace files are indexed
	// keys redacts secret keys from text before it is indexed
	// (docs/design.md#the-agent): an nsec pasted in a chat must not reach the index on disk.
	keys *policies.KeyFilter

	scopeMu sync.RWMutex
	probes  map[string]*nostr.Event // scope → an event of it, content stripped (scope.go)

	// background rebuild after a failure (rebuild.go)
	rebuilding atomic.Bool
	rebuildWG  sync.WaitGroup
	ctx        context.Context // cancelled by Close
	cancel     context.CancelFunc

	// the change log position recorded beside the index (cursor.go)
	posMu    sync.Mutex
	savedPos int64
	savedAt  time.Time
}

// indexedKinds are the kinds a rebuild reads from the store.
var indexedKinds = []int{snowclaw.KindAppData, snowclaw.KindChat, 1, 11, 12, 1111}

// Open opens the index in opts.Search.Dir, rebuilding it from the store
// when it is missing, corrupt or built with another embedder, and brings
// it up to date with the store (events saved just before a crash, and the
// RAM-only part: decrypted private memories).
func Open(ctx context.Context, opts Options) (*Plugin, error) {
	if opts.DefaultLimit <= 0 {
		opts.DefaultLimit = search.DefaultLimit
	}
	// the agent's new versions (rectify, promote, conflict rulings)
	// supersede other people's memories, and so do the owner's; anyone
	// else only their own
	opts.Search.Curators = slices.Concat(nonEmpty(opts.AgentPubkey), opts.Search.Curators, nonEmpty(opts.OwnerPubkey))
	if opts.MaxLimit <= 0 {
		opts.MaxLimit = 100
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	p := &Plugin{opts: opts, log: opts.Logger.With("component", "search"), q: newQueue(),
		keys: policies.NewKeyFilter(opts.AgentPubkey, opts.OwnerPubkey), probes: make(map[string]*nostr.Event)}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	if err := p.initFiles(); err != nil {
		return nil, err
	}
	if opts.ForceRebuild {
		if err := os.RemoveAll(opts.Search.Dir); err != nil {
			return nil, fmt.Errorf("removing the search index: %w", err)
		}
	}
	_, statErr := os.Stat(opts.Search.Dir)
	ix, err := search.Open(opts.Search)
	switch {
	case err == nil && statErr == nil:
		p.ix = ix
		current := true
		if opts.Feed != nil {
			if current, err = p.replay(ctx); err != nil {
				ix.Close()
				return nil, err
			}
		}
		if !current {
			err = search.ErrNeedsRebuild
		} else {
			err = p.catchUp(ctx, nil)
		}
		if err == nil {
			p.startFiles(ctx)
			p.startQueue()
			return p, nil
		}
		ix.Close()
		if !errors.Is(err, search.ErrNeedsRebuild) {
			return nil, err
		}
		// the index broke while catching up (a recovered panic): rebuild it
		fallthrough
	case err != nil:
		p.log.Warn("search index unusable, rebuilding it from the stored events", "dir", opts.Search.Dir, "reason", err)
		if rmErr := os.RemoveAll(opts.Search.Dir); rmErr != nil {
			return nil, fmt.Errorf("removing broken search index: %w", rmErr)
		}
		if p.ix, err = search.Open(opts.Search); err != nil {
			return nil, fmt.Errorf("opening a fresh search index: %w", err)
		}
	default:
		p.ix = ix // a new, empty index: fill it
	}
	head, err := p.feedHead(ctx)
	if err != nil {
		p.ix.Close()
		return nil, fmt.Errorf("reading the change log: %w", err)
	}
	if err := p.Rebuild(ctx, opts.Progress); err != nil {
		p.ix.Close()
		return nil, err
	}
	p.markRebuilt(head)
	p.startFiles(ctx)
	p.startQueue()
	return p, nil
}

// Rebuild indexes every searchable stored event again; progress, when not
// nil, is told how far it got.
func (p *Plugin) Rebuild(ctx context.Context, progress func(done, total int)) error {
	start := time.Now()
	if err := p.catchUp(ctx, progress); err != nil {
		return err
	}
	p.log.Info("search index rebuilt", "docs", p.ix.Count(), "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// catchUp indexes every searchable stored event the index lacks, always
// including the volatile ones, and learns which version of each address
// is current.
func (p *Plugin) catchUp(ctx context.Context, progress func(done, total int)) error {
	var batch []search.Doc
	done := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := p.ix.Index(ctx, batch...)
		done += len(batch)
		batch = batch[:0]
		if progress != nil {
			progress(done, -1)
		}
		return err
	}
	var indexErr error
	err := store.Each(ctx, p.opts.Store, nostr.Filter{Kinds: indexedKinds}, func(evt *nostr.Event) bool {
		// On a restart nearly every event is in the doc log already: what
		// catching up needs of it (its address and scope) is in the indexed
		// doc, without decoding, decrypting and sanitizing it again.
		if scope, volatile, have := p.ix.Scope(evt.ID); have && !volatile {
			p.remember(scope, evt)
			return true
		}
		doc, ok := p.docOf(evt)
		if !ok {
			return true
		}
		if _, _, have := p.ix.Scope(doc.ID); have && !doc.Volatile {
			return true
		}
		batch = append(batch, doc)
		if len(batch) >= 500 {
			indexErr = flush()
		}
		return indexErr == nil
	})
	if err == nil {
		err = indexErr
	}
	if err == nil {
		err = flush()
	}
	if err != nil {
		return fmt.Errorf("indexing stored events: %w", err)
	}
	return nil
}

// OnEventSaved indexes a stored event at once (searchable within the OK);
// the version of its address it replaces leaves the index when it is
// applied (flush), as the index knows which versions it holds.
func (p *Plugin) OnEventSaved(ctx context.Context, evt *nostr.Event) {
	doc, ok := p.docOf(evt)
	if !ok {
		return
	}
	p.q.push(op{doc: &doc})
}

// OnEventDeleted removes a deleted event from the index.
func (p *Plugin) OnEventDeleted(ctx context.Context, evt *nostr.Event) {
	p.q.push(op{remove: []string{evt.ID}})
}

// Count is the number of indexed documents, pending updates included.
func (p *Plugin) Count() int {
	p.flush(context.Background())
	return p.ix.Count()
}

// Close stops the workspace file rescans, applies pending updates and
// closes the index.
func (p *Plugin) Close() error {
	p.cancel()
	p.rebuildWG.Wait()
	p.stopFiles()
	if p.stopQ != nil {
		p.stopOnce.Do(func() { close(p.stopQ) })
		<-p.q.done
	}
	p.notePosition(p.position(), true)
	return p.ix.Close()
}

// startQueue starts the worker that applies index updates.
func (p *Plugin) startQueue() {
	p.stopQ = make(chan struct{})
	go p.runQueue(p.stopQ)
}

func nonEmpty(pk string) []string {
	if pk == "" {
		return nil
	}
	return []string{pk}
}
