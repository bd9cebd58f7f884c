package storeq

import (
	"context"
	"fmt"

	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
)

// secondPager builds cursor pages out of an eventstore.Store's queries,
// which are ordered by created_at alone and cut at a limit: every second
// newer than a full page's oldest one came whole, and that oldest second,
// which the limit may have cut anywhere, is read through a SecondReader.
type secondPager struct {
	store   eventstore.Store
	seconds SecondReader // nil: only seconds that fit one query
	max     int          // the store's query cap; 0 = unknown
}

func (p *secondPager) QueryPage(ctx context.Context, f nostr.Filter, after Cursor, limit int) ([]*nostr.Event, error) {
	if p.max > 0 && limit > p.max {
		limit = p.max // a capped query looks like a short, final one
	}
	var out []*nostr.Event
	until := f.Until
	if !after.IsZero() {
		rest, err := p.second(ctx, f, after.CreatedAt, after.ID, limit)
		if err != nil {
			return nil, err
		}
		out = rest
		if len(out) >= limit || after.CreatedAt <= 0 {
			return out, nil
		}
		below := after.CreatedAt - 1
		until = &below
	}
	if f.Since != nil && until != nil && *until < *f.Since {
		return out, nil
	}
	need := limit - len(out)
	q := f
	q.Until, q.Limit = until, need
	ch, err := p.store.QueryEvents(ctx, q)
	if err != nil {
		return nil, err
	}
	raw := collect(ch)
	// a query cut at its limit; an ids query is never cut (each id is
	// one event), and badger returns every id whatever the limit
	cut := len(raw) >= need && len(q.IDs) == 0
	page := keep(q, raw)
	if !cut || len(page) == 0 {
		return append(out, page...), nil
	}
	page = page[:min(len(page), need)]
	oldest := page[len(page)-1].CreatedAt
	for _, evt := range page {
		if evt.CreatedAt > oldest {
			out = append(out, evt)
		}
	}
	rest, err := p.second(ctx, f, oldest, "", limit-len(out))
	if err != nil {
		return nil, err
	}
	return append(out, rest...), nil
}

// second is up to n events of second `at` below id `below`, highest id
// first.
func (p *secondPager) second(ctx context.Context, f nostr.Filter, at nostr.Timestamp, below string, n int) ([]*nostr.Event, error) {
	if n <= 0 {
		return nil, nil
	}
	if p.seconds != nil {
		return p.seconds.QuerySecond(ctx, f, at, below, n)
	}
	// no way to resume inside the second: read it in one query, and
	// refuse when that query may have been cut
	q := f
	q.Since, q.Until = &at, &at
	q.Limit = PageSize
	if p.max > 0 {
		q.Limit = p.max
	}
	ch, err := p.store.QueryEvents(ctx, q)
	if err != nil {
		return nil, err
	}
	raw := collect(ch)
	if len(raw) >= q.Limit && len(q.IDs) == 0 {
		return nil, fmt.Errorf("%w (%d or more events at created_at %d)", ErrSecondTooFull, q.Limit, at)
	}
	all := keep(q, raw)
	out := make([]*nostr.Event, 0, min(n, len(all)))
	for _, evt := range all {
		if below != "" && evt.ID >= below {
			continue
		}
		if out = append(out, evt); len(out) == n {
			break
		}
	}
	return out, nil
}

// keep is a query's answer as storeq needs it: each event once, only
// those matching q, newest first. Stores are looser: badger's ids queries
// ignore since and until, and a kind named twice returns its events twice.
func keep(q nostr.Filter, evs []*nostr.Event) []*nostr.Event {
	seen := make(map[string]struct{}, len(evs))
	out := evs[:0]
	for _, evt := range evs {
		if _, dup := seen[evt.ID]; dup || !q.Matches(evt) {
			continue
		}
		seen[evt.ID] = struct{}{}
		out = append(out, evt)
	}
	sortNewestFirst(out)
	return out
}
