// Package store is the relay's event store: it opens the badger store
// (checking it for damage first, open.go), makes its answers exact
// (Exact), and reads whole result sets out of it, page by page, for the
// internal jobs (state rebuild, group deletion, reindex, COUNT) that must
// see every matching event rather than the first page a client would get.
//
// Pages follow a stable cursor, (created_at, id) in newest-first order, so
// a second holding more events than a page is read to its end instead of
// being returned again and again (or skipped). eventstore's interface
// cannot resume inside a second, so this package needs one more capability from
// the store: a Pager, which a SQL store implements directly and this package
// provides itself for the badger backend, walking its indexes (badger's
// own answers are not even exact: see Exact).
package store

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/fiatjaf/eventstore"
	badgerstore "github.com/fiatjaf/eventstore/badger"
	"github.com/nbd-wtf/go-nostr"
)

// PageSize is how many events one internal query asks the store for. The
// store's own maximum (badger's MaxLimit) must be at least this.
const PageSize = 1000

// Cursor is where a page ended, in newest-first order: created_at
// descending, then the store's own stable order inside a second (id
// descending for a SQL store, insertion order for badger). The zero
// Cursor is the start; a Pager returns it after the last page.
type Cursor struct {
	CreatedAt nostr.Timestamp
	ID        string // the last event's id
	Pos       string // the store's position inside the second; "" = by ID
}

// IsZero reports whether c is the start (or, returned, the end).
func (c Cursor) IsZero() bool { return c.ID == "" && c.Pos == "" }

// Pager is a store that pages by cursor itself. QueryPage returns up to
// limit events matching f that come after `after`, newest first, and the
// cursor to resume from, zero after the last page; it ignores f.Limit. A
// SQL store answers it with
//
//	WHERE (created_at, id) < ($1, $2) ORDER BY created_at DESC, id DESC LIMIT $3
type Pager interface {
	QueryPage(ctx context.Context, f nostr.Filter, after Cursor, limit int) ([]*nostr.Event, Cursor, error)
}

// ErrSecondTooFull is returned when a store that can do neither of the
// above holds a second too full to read in one query: going on would
// silently skip events.
var ErrSecondTooFull = errors.New("store: one second holds more events than a query returns, and the store cannot page inside a second")

// Each calls fn for every stored event matching f, newest first. It stops
// early when fn returns false. f.Limit is ignored; f.Since and f.Until hold.
func Each(ctx context.Context, store eventstore.Store, f nostr.Filter, fn func(*nostr.Event) bool) error {
	return Scan(ctx, store, f, PageSize, fn)
}

// Scan is Each with pages of pageSize events (at most the store's maximum
// query limit), for callers that usually stop after a few.
func Scan(ctx context.Context, store eventstore.Store, f nostr.Filter, pageSize int, fn func(*nostr.Event) bool) error {
	if pageSize <= 0 {
		pageSize = PageSize
	}
	p := PagerOf(store)
	var after Cursor
	for {
		page, next, err := p.QueryPage(ctx, f, after, pageSize)
		if err != nil {
			return err
		}
		for _, evt := range page {
			if !fn(evt) {
				return nil
			}
		}
		if next.IsZero() || ctx.Err() != nil {
			return ctx.Err()
		}
		after = next
	}
}

// All collects every stored event matching f, newest first.
func All(ctx context.Context, store eventstore.Store, f nostr.Filter) ([]*nostr.Event, error) {
	var out []*nostr.Event
	err := Each(ctx, store, f, func(e *nostr.Event) bool { out = append(out, e); return true })
	return out, err
}

// unwrapper is a store wrapping another one (an overlay adding virtual
// events to ids queries, say); this package pages the wrapped store.
type unwrapper interface{ Unwrap() eventstore.Store }

// PagerOf is how this package pages store: the store itself when it is a Pager,
// badger's indexes walked directly, and otherwise plain queries that fail
// with ErrSecondTooFull rather than skip events.
func PagerOf(store eventstore.Store) Pager {
	for {
		if p, ok := store.(Pager); ok {
			return p
		}
		if b, ok := store.(*badgerstore.BadgerBackend); ok {
			return badgerPager{b}
		}
		u, ok := store.(unwrapper)
		if !ok {
			return &secondPager{store: store, max: maxLimitOf(store)}
		}
		store = u.Unwrap()
	}
}

// sortNewestFirst puts events in cursor order.
func sortNewestFirst(evs []*nostr.Event) {
	slices.SortFunc(evs, func(a, b *nostr.Event) int {
		if c := cmp.Compare(b.CreatedAt, a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
}

// collect drains a query's channel.
func collect(ch chan *nostr.Event) []*nostr.Event {
	var out []*nostr.Event
	for evt := range ch {
		out = append(out, evt)
	}
	return out
}
