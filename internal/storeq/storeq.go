// Package storeq reads whole result sets out of an eventstore, page by page,
// for the internal jobs (state rebuild, group deletion, reindex) that must
// see every matching event rather than the first page a client would get.
package storeq

import (
	"context"

	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
)

// PageSize is how many events one internal query asks the store for.
const PageSize = 1000

// Each calls fn for every stored event matching f, newest first, paging
// backwards with until. It stops early when fn returns false.
func Each(ctx context.Context, store eventstore.Store, f nostr.Filter, fn func(*nostr.Event) bool) error {
	seen := make(map[string]struct{})
	f.Limit = PageSize
	for {
		ch, err := store.QueryEvents(ctx, f)
		if err != nil {
			return err
		}
		fresh := 0
		var oldest nostr.Timestamp
		for evt := range ch {
			if _, dup := seen[evt.ID]; dup {
				continue
			}
			seen[evt.ID] = struct{}{}
			fresh++
			if oldest == 0 || evt.CreatedAt < oldest {
				oldest = evt.CreatedAt
			}
			if !fn(evt) {
				for range ch { // drain so the store can release its iterator
				}
				return nil
			}
		}
		if fresh == 0 || ctx.Err() != nil {
			return ctx.Err()
		}
		// the next page includes the oldest second again: events sharing
		// it may not all have fitted; seen drops the repeats
		until := oldest
		f.Until = &until
	}
}

// All collects every stored event matching f, newest first.
func All(ctx context.Context, store eventstore.Store, f nostr.Filter) ([]*nostr.Event, error) {
	var out []*nostr.Event
	err := Each(ctx, store, f, func(e *nostr.Event) bool { out = append(out, e); return true })
	return out, err
}
