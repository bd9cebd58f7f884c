// Package memsearch is the bridge between the relay and the search
// package: it turns stored events into search documents as they are saved,
// replaced and deleted, answers NIP-50 REQ filters from the index under
// the relay's read rule, matches live search subscriptions, and rebuilds
// the index from the store when it is missing, corrupt or stale.
package memsearch

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/plugins/workspace"
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
	OpenGroup func(evt *snowclaw.Event) (string, error)
	Store     eventstore.Store
	// CanRead is the relay's read rule (docs/access.md).
	CanRead func(reader string, evt *nostr.Event) bool
	// Progress, when set, hears how far a rebuild got.
	Progress func(done, total int)
	// ForceRebuild throws the on-disk index away and builds it anew.
	ForceRebuild bool
	Logger       *slog.Logger

	// Workspace file indexing (plugins/workspace), off while IndexedPaths
	// is empty. IndexedPaths are globs relative to FilesDir ("" = the
	// working directory); a "**" segment spans directories. Changed files
	// are re-indexed every IndexInterval (0: 30 minutes; negative: only at
	// Open and on ScanFiles). File chunks are readable by OwnerPubkey (hex)
	// and the agent only.
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
	files    *workspace.Files // nil when no workspace files are indexed
	// keys redacts secret keys from text before it is indexed
	// (docs/design.md#the-agent): an nsec pasted in a chat must not reach the index on disk.
	keys *policies.KeyFilter

	scopeMu sync.RWMutex
	probes  map[string]*nostr.Event // scope → an event of it, content stripped (scope.go)

	// loading (load.go): set until the index is open and caught up;
	// meanwhile updates are held and searches answer ErrLoading
	loading  atomic.Bool
	loadWG   sync.WaitGroup
	walkWG   sync.WaitGroup // the walk of the store after a restored open
	prog     progress
	loadMu   sync.Mutex          // guards the two below and the end of the load
	sources  *map[string]float64 // SetSources while loading, applied when ready
	loadErr  error               // why the load failed
	loadDone chan struct{}       // closed when the load has ended
	// gone: ids the queue removed or replaced while walkBehind runs
	// (guarded by q.applyMu), which the walk must not bring back
	gone map[string]bool

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

// Open opens the index in opts.Search.Dir and returns once it is ready
// (load.go): rebuilt from the store when it is missing, corrupt or built
// with another embedder, and brought up to date with the store (events
// saved just before a crash, and the RAM-only part: decrypted private
// memories). Start is Open in the background.
func Open(ctx context.Context, opts Options) (*Plugin, error) {
	p, err := newPlugin(opts)
	if err != nil {
		return nil, err
	}
	if err := p.load(ctx); err != nil {
		p.cancel()
		return nil, err
	}
	close(p.loadDone)
	return p, nil
}

// newPlugin checks the options and builds the plugin without its index:
// it takes updates (held until the index is loaded) and answers searches
// with ErrLoading until load has run.
func newPlugin(opts Options) (*Plugin, error) {
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
	p.loading.Store(true)
	p.loadDone = make(chan struct{})
	if err := p.initWorkspace(); err != nil {
		p.cancel()
		return nil, err
	}
	return p, nil
}

// Rebuild indexes every searchable stored event the index lacks (all of
// them in a new index); progress, when not nil, is told how many were
// indexed so far.
func (p *Plugin) Rebuild(ctx context.Context, progress func(done, total int)) error {
	start := time.Now()
	if err := p.catchUp(ctx, p.walkProgress(StepRebuilding, 0, progress)); err != nil {
		return err
	}
	p.log.Info("search index rebuilt", "docs", p.ix.Count(), "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// catchUp indexes every searchable stored event the index lacks and
// learns which version of each address is current; progress, when not
// nil, hears how many events it walked and indexed. Behind a restored
// index it runs beside the queue's worker (walkBehind): each batch goes in
// under the worker's lock, without what the index got meanwhile or what
// the worker removed since the walk read it (gone).
func (p *Plugin) catchUp(ctx context.Context, progress func(walked, indexed int)) error {
	var batch []search.Doc
	walked, done := 0, 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		p.q.applyMu.Lock()
		kept := batch[:0]
		for _, d := range batch {
			if _, _, have := p.ix.Scope(d.ID); !have && !p.gone[d.ID] {
				kept = append(kept, d)
			}
		}
		err := p.ix.Index(ctx, kept...)
		p.q.applyMu.Unlock()
		done += len(kept)
		batch = batch[:0]
		if progress != nil {
			progress(walked, done)
		}
		return err
	}
	var indexErr error
	err := store.Each(ctx, p.opts.Store, nostr.Filter{Kinds: indexedKinds}, func(evt *nostr.Event) bool {
		if walked++; progress != nil && walked%1000 == 0 {
			progress(walked, done)
		}
		// On a restart nearly every event is in the index already: what
		// catching up needs of it (its scope) is in the indexed doc,
		// without decoding, decrypting and sanitizing it again. Volatile
		// docs are not on disk: they are in the index only if reopened
		// (reopen.go) or indexed since the start.
		if scope, _, have := p.ix.Scope(evt.ID); have {
			p.remember(scope, evt)
			return true
		}
		doc, ok := p.docOf(snowclaw.ReadEvent(evt))
		if !ok {
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
func (p *Plugin) OnEventSaved(ctx context.Context, evt *snowclaw.Event) {
	doc, ok := p.docOf(evt)
	if !ok {
		return
	}
	p.enqueue(op{doc: &doc})
}

// OnEventDeleted removes a deleted event from the index.
func (p *Plugin) OnEventDeleted(ctx context.Context, evt *snowclaw.Event) {
	p.enqueue(op{remove: []string{evt.ID}})
}

// enqueue queues an update; while the index loads it is held without
// waiting for room (load.go), up to maxHeld.
func (p *Plugin) enqueue(o op) {
	if p.loading.Load() && p.q.hold(o) {
		return
	}
	p.q.push(o)
}

// Count is the number of indexed documents, pending updates included (0
// while the index loads).
func (p *Plugin) Count() int {
	if p.loading.Load() {
		return 0
	}
	p.flush(context.Background())
	return p.ix.Count()
}

// Close stops a load under way (Start) or the workspace file rescans,
// applies pending updates and closes the index.
func (p *Plugin) Close() error {
	p.cancel()
	p.loadWG.Wait()
	p.rebuildWG.Wait()
	p.walkWG.Wait()
	if p.ix == nil {
		return nil // the load failed or was stopped before the index opened
	}
	if p.files != nil {
		p.files.Stop()
	}
	if p.stopQ != nil {
		p.stopOnce.Do(func() { close(p.stopQ) })
		<-p.q.done
	} else {
		// stopped while loading: what was held is applied now; whatever
		// the load had not caught up with yet, the next start's walk of
		// the store adds
		p.flush(context.Background())
	}
	p.notePosition(p.position(), true)
	p.saveReopen()
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
