package relay

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/snowclaw/snowclaw/relay/store"
)

// Several instances over one shared store (docs/scaling.md) are one relay
// seen from outside because each of them follows the store's change log
// (store.Feed): what another instance stored reaches this one's live
// subscribers, under this instance's own read rule, and its hooks, so
// that everything derived from events (group state, tombstones, the
// search index, live trust, the agent on the leader) is derived here too.
// The changes this instance made itself are skipped: their hooks ran in
// the write path, before the client's OK.

type peerKey struct{}

// FromPeer reports whether a hook runs for a change another instance
// made. Hooks that only keep state (an index, a membership list) run
// alike; hooks with consequences (publishing an event, deleting one,
// replying) leave those to the instance that made the change, which has
// already carried them out.
func FromPeer(ctx context.Context) bool {
	v, _ := ctx.Value(peerKey{}).(bool)
	return v
}

// follower is the relay's reader of a shared store's change log.
type follower struct {
	feed  store.Feed
	pos   atomic.Int64 // the last entry whose hooks have run; starts at the head before any state was loaded
	mu    sync.Mutex
	moved chan struct{} // closed (and replaced) whenever pos moves
	stop  context.CancelFunc
	done  chan struct{}
}

// openFeed notes the store's change log, if it has one, and where it ends
// now: New calls it before loading anything from the store, so that a
// change committed while the state is read is applied again (every hook
// tolerates that) rather than missed.
func (r *Relay) openFeed(ctx context.Context) error {
	feed := store.FeedOf(r.store)
	if feed == nil {
		return nil
	}
	head, err := feed.Head(ctx)
	if err != nil {
		return err
	}
	r.follow = &follower{feed: feed, moved: make(chan struct{})}
	r.follow.pos.Store(head)
	return nil
}

// Shared reports whether the store is shared with other instances.
func (r *Relay) Shared() bool { return r.follow != nil }

// FeedPosition is the last change log entry this instance has applied
// (0 without a shared store): everything derived from the store is
// current up to it.
func (r *Relay) FeedPosition() int64 {
	if r.follow == nil {
		return 0
	}
	return r.follow.pos.Load()
}

// FollowPeers starts applying the other instances' changes. Call it once,
// after every hook is attached; without a shared store it does nothing.
func (r *Relay) FollowPeers() {
	f := r.follow
	if f == nil || f.done != nil {
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	f.stop, f.done = stop, make(chan struct{})
	go func() {
		defer close(f.done)
		for ctx.Err() == nil {
			err := f.feed.Follow(ctx, f.pos.Load(), func(c store.Change) error {
				r.applyChange(ctx, c)
				f.advance(c.Seq)
				return nil
			})
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, store.ErrFeedTruncated) {
				// the log was pruned past us (an instance stopped for longer
				// than the retention): what is missed cannot be applied
				// change by change; restart the instance to reload
				r.log.Error("change log pruned past this instance's position: changes by other instances are missing here; restart this instance", "position", f.pos.Load())
				return
			}
			r.log.Warn("following the shared store's change log failed; retrying", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}()
}

func (f *follower) advance(seq int64) {
	f.pos.Store(seq)
	f.mu.Lock()
	close(f.moved)
	f.moved = make(chan struct{})
	f.mu.Unlock()
}

// maxCatchUpWait bounds how long a read or write waits for this instance
// to apply the changes committed before it; past it, it goes on with
// what the instance has (and logs why).
const maxCatchUpWait = 2 * time.Second

// caughtUp waits until this instance has applied every change committed
// before the call: a client that got its OK from one instance and asks
// another (a load balancer may send it anywhere) finds what it wrote, and
// a membership granted or revoked on one instance decides on every one.
// It costs one indexed read of the log's newest entries (Feed.Pending). Hooks of a peer's change
// (FromPeer) never wait: they run on the goroutine that would have to
// advance.
func (r *Relay) caughtUp(ctx context.Context) {
	f := r.follow
	if f == nil || FromPeer(ctx) || f.done == nil {
		return
	}
	// only other instances' changes need waiting for: this instance's
	// own were applied before their OK
	head, err := f.feed.Pending(ctx, f.pos.Load())
	if err != nil {
		r.log.Warn("reading the change log's head", "err", err)
		return
	}
	timeout := time.NewTimer(maxCatchUpWait)
	defer timeout.Stop()
	for {
		f.mu.Lock()
		moved := f.moved
		f.mu.Unlock()
		if f.pos.Load() >= head {
			return
		}
		select {
		case <-moved:
		case <-ctx.Done():
			return
		case <-timeout.C:
			r.log.Warn("this instance is behind the shared store's change log", "position", f.pos.Load(), "head", head)
			return
		}
	}
}

// StopFollowing ends FollowPeers and waits for the change being applied.
func (r *Relay) StopFollowing() {
	if f := r.follow; f != nil && f.done != nil {
		f.stop()
		<-f.done
	}
}

// applyChange runs one change another instance made through this
// instance, as if it had been written or deleted here, minus the
// consequences (FromPeer).
func (r *Relay) applyChange(ctx context.Context, c store.Change) {
	if c.Origin == r.follow.feed.Origin() || c.Event == nil {
		return
	}
	ctx = context.WithValue(ctx, peerKey{}, true)
	evt := c.Event
	switch c.Op {
	case store.Saved:
		for _, on := range r.OnEventSaved {
			on(ctx, evt)
		}
		r.expiry.track(evt)
		r.broadcast(evt)
	case store.Deleted:
		r.expiry.forget(evt.ID)
		for _, on := range r.OnEventDeleted {
			on(ctx, evt)
		}
	}
}
