package memsearch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/search"
)

// A relay serves from the moment it starts, whatever the size of its
// index: New returns at once and Begin opens the index behind it. Until
// it is ready, a search answers ErrLoading's "error: search index is
// loading (62% done), try again shortly", which a client retries, and
// everything else the relay does goes on. Updates from the relay's hooks
// are held in the queue meanwhile (without back-pressure up to maxHeld: a
// load must not stall every writer) and applied, in the order the relay
// made them, once the index has caught up with the store; an update for
// an event the catch-up has already indexed is dropped (applyOps), so
// nothing is indexed twice.
//
// An index that its last Close left whole (search.Index.Restored: the
// docs, postings and vector graph read back without analysing any text)
// is ready as soon as the private memories it held in RAM are opened again
// (reopen.go); the walk of the store that finds events the index lacks —
// written while the relay was down, or after the index closed — then
// runs behind the open index. Any other open (a first start, a crash)
// walks the store before it is ready.

// ErrLoading is what searches answer (wrapped, with the progress in the
// text) while the index loads; errors.Is finds it.
var ErrLoading = errors.New("search index is loading")

// Steps of a load, as the health answer names them.
const (
	StepOpening    = "opening"     // reading the index from disk
	StepCatchingUp = "catching up" // walking the store for events the index lacks
	StepRebuilding = "rebuilding"  // indexing every stored event (a first start)
)

// LoadState is how far the index's load got.
type LoadState struct {
	Ready bool
	Step  string // while loading
	// Done and Total measure the step: bytes read while opening, events
	// walked while catching up or rebuilding. Total is 0 when unknown.
	Done, Total int64
	// Err is why the load failed; the index stays unusable.
	Err error
}

// Percent is how much of the step is done, -1 when its size is unknown.
func (s LoadState) Percent() int {
	if s.Total <= 0 {
		return -1
	}
	return int(min(99, s.Done*100/s.Total))
}

// progress is the load's position, read by health checks and refusals
// while the loader moves it.
type progress struct {
	step        atomic.Pointer[string]
	done, total atomic.Int64
}

func (g *progress) set(step string, done, total int64) {
	g.step.Store(&step)
	g.done.Store(done)
	g.total.Store(total)
}

// New builds the plugin without its index: it takes the relay's updates
// (held) and answers searches with ErrLoading until Begin has loaded the
// index. Ready, State and Loaded tell how the load goes.
func New(opts Options) (*Plugin, error) { return newPlugin(opts) }

// Start builds the plugin and loads its index in the background (New,
// then Begin).
func Start(opts Options) (*Plugin, error) {
	p, err := newPlugin(opts)
	if err == nil {
		p.Begin()
	}
	return p, err
}

// Begin loads the index in the background; call it once, when whatever
// must be up first (the relay) is: the load takes cores a start needs.
func (p *Plugin) Begin() {
	p.loadWG.Add(1)
	go func() {
		defer p.loadWG.Done()
		start := time.Now()
		if err := p.load(p.ctx); err != nil {
			p.loadMu.Lock()
			p.loadErr = err
			p.loadMu.Unlock()
			if p.ctx.Err() == nil {
				p.log.Error("search index failed to load", "err", err)
			}
			close(p.loadDone)
			return
		}
		p.log.Info("search index ready", "docs", p.ix.Count(), "took", time.Since(start).Round(time.Millisecond))
		close(p.loadDone)
	}()
}

// Ready reports whether searches are answered.
func (p *Plugin) Ready() bool { return !p.loading.Load() }

// Loaded is closed when the load has ended, ready or failed (State.Err).
func (p *Plugin) Loaded() <-chan struct{} { return p.loadDone }

// State is how far the load got.
func (p *Plugin) State() LoadState {
	if !p.loading.Load() {
		return LoadState{Ready: true}
	}
	p.loadMu.Lock()
	err := p.loadErr
	p.loadMu.Unlock()
	s := LoadState{Err: err, Done: p.prog.done.Load(), Total: p.prog.total.Load()}
	if st := p.prog.step.Load(); st != nil {
		s.Step = *st
	}
	return s
}

// usable is nil when a search may run, else the refusal its client gets.
func (p *Plugin) usable() error {
	switch {
	case p.loading.Load():
		s := p.State()
		if s.Err != nil {
			return snowclaw.Internal("search index failed to load: %v", s.Err)
		}
		how := "starting"
		if pc := s.Percent(); pc >= 0 {
			how = fmt.Sprintf("%d%% done", pc)
		} else if s.Done > 0 {
			how = fmt.Sprintf("%d events read", s.Done)
		}
		return &snowclaw.Error{Reason: snowclaw.ReasonError, Err: ErrLoading,
			Message: fmt.Sprintf("search index is loading (%s), try again shortly", how)}
	case p.rebuilding.Load():
		return ErrRebuilding
	}
	return nil
}

// load opens the index, rebuilding it from the store when it is missing,
// unusable or built with another embedder, brings it up to date with the
// store, and makes it ready. An error leaves no index open.
func (p *Plugin) load(ctx context.Context) (err error) {
	opts := p.opts
	if opts.ForceRebuild {
		if err := os.RemoveAll(opts.Search.Dir); err != nil {
			return fmt.Errorf("removing the search index: %w", err)
		}
	}
	defer func() {
		if err != nil && p.ix != nil {
			p.ix.Close()
			p.ix = nil
		}
	}()
	_, statErr := os.Stat(opts.Search.Dir)
	p.prog.set(StepOpening, 0, 0)
	so := opts.Search
	so.Progress = func(done, total int64) {
		p.prog.set(StepOpening, done, total)
		if opts.Search.Progress != nil {
			opts.Search.Progress(done, total)
		}
	}
	ix, err := search.OpenContext(ctx, so)
	switch {
	case err == nil && statErr == nil:
		p.ix = ix
		if !ix.Restored() {
			p.dropReopen()
		}
		current := true
		if opts.Feed != nil {
			if current, err = p.replay(ctx); err != nil {
				return err
			}
		}
		switch {
		case !current:
			err = search.ErrNeedsRebuild
		case ix.Restored():
			err = p.reopen(ctx)
		default:
			err = p.catchUp(ctx, p.walkProgress(StepCatchingUp, int64(ix.Count()), opts.Progress))
		}
		if err == nil {
			return p.becomeReady(ctx, ix.Restored())
		}
		ix.Close()
		p.ix = nil
		if !errors.Is(err, search.ErrNeedsRebuild) || ctx.Err() != nil {
			return err
		}
		// the index broke while catching up (a recovered panic): rebuild it
		fallthrough
	case err != nil:
		if ctx.Err() != nil {
			return ctx.Err() // stopped, not broken: the index stays as it is
		}
		p.log.Warn("search index unusable, rebuilding it from the stored events", "dir", opts.Search.Dir, "reason", err)
		if rmErr := os.RemoveAll(opts.Search.Dir); rmErr != nil {
			return fmt.Errorf("removing broken search index: %w", rmErr)
		}
		if p.ix, err = search.Open(opts.Search); err != nil {
			return fmt.Errorf("opening a fresh search index: %w", err)
		}
	default:
		p.ix = ix // a new, empty index: fill it
	}
	head, err := p.feedHead(ctx)
	if err != nil {
		return fmt.Errorf("reading the change log: %w", err)
	}
	if err := p.Rebuild(ctx, opts.Progress); err != nil {
		return err
	}
	p.markRebuilt(head)
	return p.becomeReady(ctx, false)
}

// walkProgress reports a walk of the store (about total events, 0 when
// unknown) as the load's step, and the docs it indexed to progress.
func (p *Plugin) walkProgress(step string, total int64, progress func(done, total int)) func(walked, indexed int) {
	p.prog.set(step, 0, total)
	return func(walked, indexed int) {
		p.prog.set(step, int64(walked), total)
		if progress != nil {
			progress(indexed, -1)
		}
	}
}

// becomeReady applies what the load held back, starts the workspace
// files and the queue's worker and opens searches; after a restored open
// the walk of the store follows in the background.
func (p *Plugin) becomeReady(ctx context.Context, walkAfter bool) error {
	p.probesFromIndex()
	if p.files != nil {
		p.files.Start(ctx, p.ix)
	}
	p.loadMu.Lock()
	defer p.loadMu.Unlock()
	if p.sources != nil {
		if err := p.ix.SetSources(*p.sources); err != nil {
			p.log.Error("applying source_preference", "err", err)
		}
		p.sources = nil
	}
	// the worker and every search apply what is held from here on; this
	// first flush makes the index current before the first search
	p.flush(ctx)
	p.startQueue()
	p.loading.Store(false)
	if walkAfter {
		p.walkWG.Add(1)
		go func() {
			defer p.walkWG.Done()
			p.walkBehind(p.ctx)
		}()
	}
	return nil
}

// walkBehind walks the store behind a restored index for the events it
// lacks. Searches run meanwhile; the queue's removals and replacements
// are noted (gone) so that the walk never brings back an event the relay
// dropped after the walk read it.
func (p *Plugin) walkBehind(ctx context.Context) {
	p.q.applyMu.Lock()
	p.gone = make(map[string]bool)
	p.q.applyMu.Unlock()
	defer func() {
		p.q.applyMu.Lock()
		p.gone = nil
		p.q.applyMu.Unlock()
	}()
	start := time.Now()
	before := p.ix.Count()
	err := p.catchUp(ctx, nil)
	if err == nil {
		// the restored index has not read its doc log: damage in it is
		// found here, not when a doc is read back
		err = p.ix.CheckLog(ctx)
	}
	if err != nil {
		if ctx.Err() == nil {
			p.log.Error("catching up with the stored events", "err", err)
			p.rebuildIfBroken(err)
		}
		return
	}
	p.log.Info("search index caught up with the store", "added", p.ix.Count()-before, "took", time.Since(start).Round(time.Millisecond))
}
