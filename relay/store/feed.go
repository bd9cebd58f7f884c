package store

import (
	"context"
	"errors"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// A shared store (PostgreSQL) is written by several relay instances at
// once. Each of them must see what the others stored and deleted: to
// fan it out to its own live subscribers, keep its own derived state
// (group membership, tombstones, the search index) and let nothing
// instance-local decide access. The store therefore keeps a change log,
// written in the same transaction as the change itself; a Feed reads it.
// Every reader gets every entry once, in one order (seq order), the same
// for all of them; that order is not commit order (writers do not take
// turns), so an entry can be committed after one with a higher seq, and
// a reader waits for it rather than skip it. A single-process store
// (badger) has no Feed: nobody else writes to it.

// Op is what happened to an event.
type Op uint8

const (
	// Saved: the event was stored (for a replaceable or addressable
	// kind, it replaced the older versions of its address).
	Saved Op = 1
	// Deleted: the event was removed from the store.
	Deleted Op = 2
	// Unused: a position drawn by a write that stored nothing after all
	// (a duplicate racing in, a replaceable version that lost); it has
	// no event, and is logged so that readers need not wait to learn
	// it will never be.
	Unused Op = 3
)

func (o Op) String() string {
	switch o {
	case Saved:
		return "saved"
	case Deleted:
		return "deleted"
	case Unused:
		return "unused"
	}
	return "unknown"
}

// Change is one entry of the change log.
type Change struct {
	Seq    int64     // position in the log: strictly increasing in the order every reader gets entries
	Op     Op        // what happened
	Origin string    // the instance that made the change (Feed.Origin of its store)
	At     time.Time // when it was written, by the store's clock
	// Event is nil for Unused, for a Tail's own entries, and for a Saved
	// entry whose event was removed before it was read (the entry of its
	// removal follows).
	Event *nostr.Event
}

// ErrFeedTruncated is returned by Follow when the entries right after the
// requested position have been pruned from the log: whoever follows can
// no longer catch up change by change and must rebuild from the store.
var ErrFeedTruncated = errors.New("store: the change log no longer holds the entries after this position; rebuild from the store")

// A write decided by rules must have seen every change other instances
// committed before it arrived. The instance can make sure of it before
// deciding (Feed.Pending, one read of the log), or, for a save, let the
// store check it in the save's own statement: WithDecidedAt says which
// position of the log the decision saw, and SaveSequenced then stores
// nothing and returns ErrStale if the log holds a decisive change by
// another instance after it: a deletion, or a saved event of a kind
// snowclaw.IsDecisiveKind accepts (other changes cannot alter what the
// rules decided). The instance decides again, on current state.

// ErrStale: another instance's decisive change that the decision did not
// see had been committed when the store came to save; nothing was stored.
var ErrStale = errors.New("store: the decision missed a change another instance had committed")

type decidedAtKey struct{}

// WithDecidedAt is ctx for a SaveSequenced whose decision saw the log up
// to pos (every entry up to it applied); pos < 0 removes the check.
func WithDecidedAt(ctx context.Context, pos int64) context.Context {
	return context.WithValue(ctx, decidedAtKey{}, pos)
}

// DecidedAt is the position WithDecidedAt put in ctx; false when none.
func DecidedAt(ctx context.Context) (int64, bool) {
	pos, ok := ctx.Value(decidedAtKey{}).(int64)
	return pos, ok && pos >= 0
}

// Feed is a store's change log. A store with a Feed checks the position
// WithDecidedAt gives its SaveSequenced.
type Feed interface {
	// Origin is this process's own id in the log: the changes it made
	// itself carry it.
	Origin() string
	// Head is the position of the newest entry (0 for an empty log),
	// returned once no entry below it can still be committed: a follower
	// that has just read the whole store starts there.
	Head(ctx context.Context) (int64, error)
	// Lag is the position of the newest entry and how long ago, by the
	// store's clock, the oldest entry after `after` was written (zero
	// when there is none): how far a follower at `after` is behind, in
	// entries and in time.
	Lag(ctx context.Context, after int64) (head int64, waited time.Duration, err error)
	// Pending is the position of the newest entry after `after` that
	// another instance made, 0 when there is none: what this instance
	// must apply before it answers as every instance would. It includes
	// every entry committed before the call.
	Pending(ctx context.Context, after int64) (int64, error)
	// Follow calls fn for every entry after position `after`, in order,
	// and then for each new one as it is committed, until ctx ends or fn
	// returns an error (which Follow returns). Entries arrive within a
	// few milliseconds of their commit (PostgreSQL LISTEN/NOTIFY), and
	// none is skipped: a lost notification or a broken connection only
	// delays them. ErrFeedTruncated: see there.
	Follow(ctx context.Context, after int64, fn func(Change) error) error
	// Tail is Follow for the process's own follower: the entries this
	// process made come without their Event (it has them) and are
	// known without reading them back; their Seq still arrives in its
	// place, so that the position after fn returns means every entry up
	// to it. One Tail at a time per store.
	Tail(ctx context.Context, after int64, fn func(Change) error) error
}

// FeedOf returns store's change log, or nil when it has none (a store
// only this process writes).
func FeedOf(s any) Feed {
	for {
		if f, ok := s.(Feed); ok {
			return f
		}
		u, ok := s.(unwrapper)
		if !ok {
			return nil
		}
		s = u.Unwrap()
	}
}
