package relay

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
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

// AsPeer is ctx for the hooks of a change another instance made: what
// the relay passes them, and what a plugin's tests pass to run its hooks
// as the relay does.
func AsPeer(ctx context.Context) context.Context { return context.WithValue(ctx, peerKey{}, true) }

// follower is the relay's reader of a shared store's change log.
type follower struct {
	feed  store.Feed
	pos   atomic.Int64 // the last entry whose hooks have run; starts at the head before any state was loaded
	head  atomic.Int64 // the newest entry known to exist (read, or told by Pending)
	mu    sync.Mutex
	moved chan struct{} // closed (and replaced) whenever pos moves
	dead  atomic.Bool   // stopped for good (the log was pruned past pos)
	stop  context.CancelFunc
	done  chan struct{}

	decisive atomic.Int64 // how many decisive changes by other instances were applied (snowclaw.IsDecisiveKind)
}

// isDecisive reports whether c, another instance's change, can alter
// what the write rules decide for a save of another kind.
func isDecisive(c store.Change) bool {
	return c.Op == store.Deleted || c.Op == store.Saved && c.Event != nil && snowclaw.IsDecisiveKind(c.Event.Kind)
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
	r.follow.head.Store(head)
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
			err := f.feed.Tail(ctx, f.pos.Load(), func(c store.Change) error {
				if c.Origin != f.feed.Origin() && isDecisive(c) {
					f.decisive.Add(1)
				}
				f.saw(c.Seq)
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
				f.dead.Store(true)
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

// saw notes that entry seq exists.
func (f *follower) saw(seq int64) {
	for {
		h := f.head.Load()
		if seq <= h || f.head.CompareAndSwap(h, seq) {
			return
		}
	}
}

func (f *follower) advance(seq int64) {
	f.pos.Store(seq)
	f.mu.Lock()
	close(f.moved)
	f.moved = make(chan struct{})
	f.mu.Unlock()
}

// maxCatchUpWait bounds how long a read or write waits for this instance
// to apply the changes committed before it; past it, it is refused.
const maxCatchUpWait = 2 * time.Second

// caughtUp waits until this instance has applied every change committed
// before the call: a client that got its OK from one instance and asks
// another (a load balancer may send it anywhere) finds what it wrote, and
// a membership granted or revoked on one instance decides on every one.
// When it cannot tell (the log cannot be read) or cannot get there in
// maxCatchUpWait, the read or write is refused with a retryable error:
// deciding on state this instance cannot prove current would let a
// removed member in. It costs one indexed read of the log's newest
// entries (Feed.Pending). Hooks of a peer's change (FromPeer) never
// wait: they run on the goroutine that would have to advance.
func (r *Relay) caughtUp(ctx context.Context) error {
	f := r.follow
	if f == nil || FromPeer(ctx) || f.done == nil || ctx.Value(caughtUpKey{}) != nil {
		return nil
	}
	if f.dead.Load() {
		return errBehind("lost its place in the shared store's change log and must be restarted")
	}
	// only other instances' changes need waiting for: this instance's
	// own were applied before their OK
	head, err := f.feed.Pending(ctx, f.pos.Load())
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.log.Warn("reading the change log's head", "err", err)
		return errBehind("cannot read the shared store's change log")
	}
	f.saw(head)
	timeout := time.NewTimer(maxCatchUpWait)
	defer timeout.Stop()
	for {
		f.mu.Lock()
		moved := f.moved
		f.mu.Unlock()
		pos := f.pos.Load()
		if pos >= head {
			return nil
		}
		select {
		case <-moved:
		case <-ctx.Done():
			return ctx.Err()
		case <-timeout.C:
			r.met.behind.Inc()
			return errBehind(fmt.Sprintf("is %d changes behind the shared store", head-pos))
		}
	}
}

// onCurrentState runs decide on state that includes every change other
// instances committed before the call: after caughtUp, or — for a save
// of a regular kind that is not itself decisive (snowclaw.IsDecisiveKind)
// — at once, proving it afterwards:
//
//   - an acceptance: the save carries the position the rules decided on
//     (store.WithDecidedAt), and the store's statement checks, against a
//     snapshot taken after the write arrived, that no other instance's
//     decisive change came after it; otherwise it stores nothing
//     (store.ErrStale);
//   - a refusal by the rules, which the store never sees: caughtUp, and
//     it stands if that applied no decisive change by another instance.
//
// Either way a write that fails the proof is decided again after
// caughtUp, so the guarantee is caughtUp's. Only changes of the decisive
// kinds can alter a decision, and they are rare next to chat and notes:
// so a save costs no read of the log, even while every instance writes.
func (r *Relay) onCurrentState(ctx context.Context, evt *snowclaw.Event, decide func(context.Context, *snowclaw.Event) (stored, byRules bool, err error)) (bool, error) {
	if dctx, f, ok := r.decideAtOnce(ctx, evt); ok {
		seen := f.decisive.Load()
		stored, byRules, err := decide(dctx, evt)
		switch {
		case errors.Is(err, store.ErrStale):
		case byRules:
			if cerr := r.caughtUp(ctx); cerr != nil {
				return false, cerr
			}
			if f.decisive.Load() == seen {
				return false, err
			}
			r.met.again.Inc()
			stored, _, err := decide(store.WithDecidedAt(ctx, -1), evt)
			return stored, err
		default:
			return stored, err
		}
		r.met.again.Inc()
	}
	if err := r.caughtUp(ctx); err != nil {
		return false, err
	}
	stored, _, err := decide(store.WithDecidedAt(ctx, -1), evt)
	return stored, err
}

// decideAtOnce is ctx for deciding evt at once (onCurrentState), and ok.
// Replaceable and addressable kinds are not: their rules read the
// versions stored at their address, which any instance's save changes.
func (r *Relay) decideAtOnce(ctx context.Context, evt *snowclaw.Event) (context.Context, *follower, bool) {
	f := r.follow
	if f == nil || !nostr.IsRegularKind(evt.Kind) || snowclaw.IsDecisiveKind(evt.Kind) || FromPeer(ctx) || f.done == nil || f.dead.Load() {
		return ctx, nil, false
	}
	return store.WithDecidedAt(ctx, f.pos.Load()), f, true
}

type caughtUpKey struct{}

// withCaughtUp marks ctx as that of a write whose outer write (a client's
// event, whose saved hooks publish) has caught up already.
func withCaughtUp(ctx context.Context) context.Context {
	return context.WithValue(ctx, caughtUpKey{}, true)
}

// errBehind is the refusal of a read or write this instance cannot decide
// on current state. error: tells clients to try again.
func errBehind(why string) error {
	return snowclaw.Internal("this relay instance %s; try again in a few seconds", why)
}

// CaughtUp is caughtUp for the relay's other entry points (the HTTP API):
// nil once this instance has applied every change committed before the
// call, a retryable refusal when it cannot.
func (r *Relay) CaughtUp(ctx context.Context) error { return r.caughtUp(ctx) }

// FeedLag is how far this instance is behind the shared store's change
// log.
type FeedLag struct {
	Position int64   `json:"position"` // the last entry applied here
	Head     int64   `json:"head"`     // the newest entry in the log
	Entries  int64   `json:"entries"`  // Head - Position
	Seconds  float64 `json:"seconds"`  // how long ago the oldest entry not applied here was written; 0 when none waits
	Stopped  bool    `json:"stopped"`  // the follower gave up (the log was pruned past it): restart
}

// maxHealthyLag is the lag past which health says this instance is not
// ok: its reads and writes are being refused or soon will be.
const maxHealthyLag = maxCatchUpWait

// Healthy reports whether the lag lets this instance answer.
func (l FeedLag) Healthy() bool {
	return !l.Stopped && l.Seconds < maxHealthyLag.Seconds()
}

// FeedLag reads the log's head and says how far behind it this instance
// is; false without a shared store.
func (r *Relay) FeedLag(ctx context.Context) (FeedLag, bool, error) {
	f := r.follow
	if f == nil {
		return FeedLag{}, false, nil
	}
	pos := f.pos.Load()
	head, waited, err := f.feed.Lag(ctx, pos)
	if err != nil {
		return FeedLag{}, true, err
	}
	f.saw(head)
	l := FeedLag{Position: pos, Head: head, Entries: max(head-pos, 0), Stopped: f.dead.Load(), Seconds: waited.Seconds()}
	return l, true, nil
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
	ctx = WithPosition(AsPeer(ctx), c.Seq)
	evt := snowclaw.ReadEvent(c.Event)
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
