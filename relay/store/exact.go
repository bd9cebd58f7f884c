package store

import (
	"context"
	"errors"
	"sync"

	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
)

// Exact is a store whose answers are exact. eventstore's badger
// backend indexes tag values with no terminator, so its range for
// d="hid" also yields d="hidopen", h="A" yields h="AB", and so on: extra
// events in an answer, and worse, real ones missing when the impostors
// fill the limit (a replaceable address is asked for with a limit of
// one). Its ReplaceEvent trusts the same answer and deletes the older
// versions of every address its d tag is a prefix of. Every reader and
// writer of the relay goes through this wrapper, so that defect is
// handled once, here, rather than by each caller re-checking tags.
type Exact struct {
	eventstore.Store
}

// NewExact wraps store.
func NewExact(store eventstore.Store) *Exact { return &Exact{Store: store} }

// deleteMu serializes deletions: eventstore's badger DeleteEvent counts
// them in a package variable, unguarded, to run its value-log GC every
// 256th (a data race between any two deletions, in any store).
var deleteMu sync.Mutex

// DeleteEvent deletes evt, one deletion at a time (see deleteMu).
func (s *Exact) DeleteEvent(ctx context.Context, evt *nostr.Event) error {
	deleteMu.Lock()
	defer deleteMu.Unlock()
	return s.Store.DeleteEvent(ctx, evt)
}

// Unwrap is the wrapped store (paging reads it directly).
func (s *Exact) Unwrap() eventstore.Store { return s.Store }

// QueryEvents answers f with exactly its matches, newest first, at most
// its limit (the store's default when none is given), read by cursor so
// that impostors never take a match's place.
func (s *Exact) QueryEvents(ctx context.Context, f nostr.Filter) (chan *nostr.Event, error) {
	if f.Search != "" {
		return s.Store.QueryEvents(ctx, f)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = defaultLimit(s.Store)
	}
	if tl := nostr.GetTheoreticalLimit(f); tl == 0 {
		limit = 0
	} else if tl > 0 && tl < limit {
		limit = tl
	}
	ch := make(chan *nostr.Event)
	go func() {
		defer close(ch)
		if limit <= 0 {
			return
		}
		n := 0
		_ = Scan(ctx, s.Store, f, limit, func(evt *nostr.Event) bool {
			select {
			case ch <- evt:
				n++
				return n < limit
			case <-ctx.Done():
				return false
			}
		})
	}()
	return ch, nil
}

// ErrNotNewer is ReplaceEvent's answer when the store already holds evt
// or a version of its address at least as new (NIP-01: newest created_at,
// then lowest id): nothing was stored or deleted. A shared store settles
// this inside its own transaction, so it is the race-free answer when
// several processes write one address.
var ErrNotNewer = errors.New("store: a version at least as new is already stored")

// Replacer is a store that settles NIP-01 replacement itself, atomically
// (PostgreSQL: one transaction over a unique address): its ReplaceEvent
// stores evt and removes the older versions, or returns ErrNotNewer.
// Exact hands replacements to it rather than deciding them here.
type Replacer interface {
	eventstore.Store
	ReplacesAtomically()
}

// ReplaceEvent stores evt unless its address holds a newer version
// (ErrNotNewer), then deletes the older versions of exactly that address.
// The new version is saved before the old ones go, so a crash in between
// leaves two versions (the next replacement, and every newest-first
// reader, settle it), never none. Callers serialize writers of one address
// (relay/write.go); a Replacer settles it in the store.
func (s *Exact) ReplaceEvent(ctx context.Context, evt *nostr.Event) error {
	if r, ok := s.Store.(Replacer); ok {
		return r.ReplaceEvent(ctx, evt)
	}
	prev, err := Versions(ctx, s.Store, evt)
	if err != nil {
		return err
	}
	if NewerIn(prev, evt) {
		return ErrNotNewer
	}
	if err := s.SaveEvent(ctx, evt); err != nil {
		return err
	}
	for _, p := range prev {
		if err := s.DeleteEvent(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// Addressed is a store that keeps each replaceable and addressable
// event's address as a key of its own: its versions are one lookup, not
// a filter over the author's events of that kind.
type Addressed interface {
	// AtAddress returns the stored versions of evt's address (see
	// Versions), newest first.
	AtAddress(ctx context.Context, evt *nostr.Event) ([]*nostr.Event, error)
}

// Versions are the stored versions of evt's address (NIP-01: kind and
// author, and for an addressable kind the first d tag, a missing one
// counting as ""), newest first; none for a kind that has no address.
func Versions(ctx context.Context, store eventstore.Store, evt *nostr.Event) ([]*nostr.Event, error) {
	addressable := nostr.IsAddressableKind(evt.Kind)
	if !addressable && !nostr.IsReplaceableKind(evt.Kind) {
		return nil, nil
	}
	if a, ok := store.(Addressed); ok {
		return a.AtAddress(ctx, evt)
	}
	f := nostr.Filter{Kinds: []int{evt.Kind}, Authors: []string{evt.PubKey}}
	d := evt.Tags.GetD()
	if addressable && d != "" {
		// the index narrows it; the address is checked below, since a
		// filter also matches a d tag that is not the first
		f.Tags = nostr.TagMap{"d": {d}}
	}
	var out []*nostr.Event
	err := Each(ctx, store, f, func(p *nostr.Event) bool {
		if !addressable || p.Tags.GetD() == d {
			out = append(out, p)
		}
		return true
	})
	return out, err
}

// NewerIn reports whether versions hold evt itself or a version newer
// than it.
func NewerIn(versions []*nostr.Event, evt *nostr.Event) bool {
	for _, p := range versions {
		if p.ID == evt.ID || !isOlder(p, evt) {
			return true
		}
	}
	return false
}

// isOlder is NIP-01's order of versions: older created_at, then on a tie
// the higher id loses.
func isOlder(a, b *nostr.Event) bool {
	return a.CreatedAt < b.CreatedAt || (a.CreatedAt == b.CreatedAt && a.ID > b.ID)
}

// defaultLimit is what the store answers a query without a limit with.
func defaultLimit(store eventstore.Store) int {
	for {
		if m := maxLimitOf(store); m > 0 {
			return max(m/4, 1)
		}
		u, ok := store.(unwrapper)
		if !ok {
			return PageSize
		}
		store = u.Unwrap()
	}
}
