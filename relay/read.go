package relay

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/relay/store"
)

// maxQueryPages bounds how far one REQ pages through events the reader
// may not see while filling its limit.
const maxQueryPages = 8

// maxCount bounds the events one COUNT walks; counts above it are capped.
const maxCount = 100_000

// queryVisible answers a stored-event query with only what the reader
// may see, handing each event to send. When hidden events eat into the
// limit it reads further back by cursor (relay/store), looking at no more
// than maxQueryPages pages' worth. A store that fails is a StoreFailed,
// after whatever was sent before it failed.
func (r *Relay) queryVisible(ctx context.Context, f nostr.Filter, send func(*nostr.Event)) error {
	r.met.query(queryREQ)
	reader := policies.ReaderOf(ctx)
	limit := r.opts.Limits.ClampLimit(f)
	if tl := nostr.GetTheoreticalLimit(f); tl >= 0 && tl < limit {
		limit = tl
	}
	if limit == 0 {
		return nil
	}
	sent, looked := 0, 0
	now := r.now()
	err := store.Scan(ctx, r.store, f, limit, func(evt *nostr.Event) bool {
		looked++
		if e := snowclaw.ReadEvent(evt); !e.Expired(now) {
			if ok, _ := r.vis.CanRead(reader, e); ok {
				send(evt)
				sent++
			}
		}
		return ctx.Err() == nil && sent < limit && looked < maxQueryPages*limit
	})
	if err != nil {
		return snowclaw.StoreFailed(err, "querying %s", f)
	}
	return nil
}

// countVisible is NIP-45 COUNT under the same read rule as REQ; with a
// search it counts what the search would return.
func (r *Relay) countVisible(ctx context.Context, f snowclaw.Filter) (int64, error) {
	r.met.query(queryCount)
	reader := policies.ReaderOf(ctx)
	if f.Search != nil {
		f.Limit = 1 << 30 // clamped to the search maximum
		evs, _, err := r.Search(ctx, reader, f)
		return int64(len(evs)), err
	}
	var n int64
	now := r.now()
	err := store.Each(ctx, r.store, f.Filter, func(evt *nostr.Event) bool {
		e := snowclaw.ReadEvent(evt)
		if e.Expired(now) {
			return true
		}
		if ok, _ := r.vis.CanRead(reader, e); !ok {
			return true
		}
		n++
		return n < maxCount
	})
	if err != nil {
		return n, snowclaw.StoreFailed(err, "counting %s", f.Filter)
	}
	return n, nil
}
