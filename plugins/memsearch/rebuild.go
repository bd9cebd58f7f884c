package memsearch

import (
	"context"
	"errors"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/relay/store"
	"github.com/snowclaw/snowclaw/search"
)

// ErrRebuilding is what searches get while the index is rebuilt after a
// failure; the message is the one clients see.
var ErrRebuilding = snowclaw.Internal("search index is being rebuilt, try again shortly")

// failed turns an index error into the client's answer. An index that
// asks for a rebuild (damage, a recovered panic) is rebuilt from the
// stored events in the background, and the client is told to retry.
func (p *Plugin) failed(err error) error {
	if errors.Is(err, search.ErrNeedsRebuild) {
		p.scheduleRebuild(err)
		return ErrRebuilding
	}
	return snowclaw.Internal("search failed: %v", err)
}

// rebuildIfBroken schedules a rebuild when a write failed in a way that
// leaves the index untrustworthy; the rebuild reads the events (the
// failed batch included) from the store.
func (p *Plugin) rebuildIfBroken(err error) {
	if errors.Is(err, search.ErrNeedsRebuild) {
		p.scheduleRebuild(err)
	}
}

// Rebuilding reports whether a background rebuild is under way (the
// health signal tests and operators wait on).
func (p *Plugin) Rebuilding() bool { return p.rebuilding.Load() }

// scheduleRebuild starts one background rebuild from the store unless one
// runs. Searches answer ErrRebuilding until it is done; writes queue up
// and are applied after it.
func (p *Plugin) scheduleRebuild(cause error) {
	if p.ctx.Err() != nil {
		return // closing
	}
	if !p.rebuilding.CompareAndSwap(false, true) {
		return
	}
	args := []any{"err", cause}
	var pe *search.PanicError
	if errors.As(cause, &pe) {
		args = append(args, "stack", string(pe.Stack))
	}
	p.log.Error("search index failed; rebuilding it from the stored events", args...)
	p.rebuildWG.Add(1)
	go func() {
		defer p.rebuildWG.Done()
		defer p.rebuilding.Store(false)
		if err := p.rebuildFromStore(p.ctx); err != nil {
			p.log.Error("search index rebuild failed", "err", err)
		}
	}()
}

// rebuildFromStore replaces the index with a fresh one built from every
// searchable stored event (search.Index.Rebuild builds it beside the old
// one), then re-indexes workspace files.
func (p *Plugin) rebuildFromStore(ctx context.Context) error {
	start := time.Now()
	last := start
	progress := func(done, total int) {
		if time.Since(last) >= 2*time.Second || total >= 0 {
			last = time.Now()
			p.log.Info("search index rebuild", "docs", done, "elapsed", time.Since(start).Round(time.Millisecond))
		}
	}
	err := p.ix.Rebuild(ctx, func(yield func(search.Doc) error) error {
		var yerr error
		err := store.Each(ctx, p.opts.Store, nostr.Filter{Kinds: indexedKinds}, func(evt *nostr.Event) bool {
			doc, ok := p.docOf(snowclaw.ReadEvent(evt))
			if !ok {
				return true
			}
			yerr = yield(doc)
			return yerr == nil
		})
		if err == nil {
			err = yerr
		}
		return err
	}, progress)
	if err != nil {
		return err
	}
	if p.files != nil {
		if _, err := p.files.Scan(ctx); err != nil {
			p.log.Warn("re-indexing workspace files after the rebuild", "err", err)
		}
	}
	p.log.Info("search index rebuilt", "docs", p.ix.Count(), "took", time.Since(start).Round(time.Millisecond))
	return nil
}
