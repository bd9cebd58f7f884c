package store

import (
	"context"
	"fmt"

	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
)

// secondPager builds cursor pages out of a plain eventstore.Store's
// queries, which are ordered by created_at alone and cut at a limit: every
// second newer than a page's oldest one came whole, and that oldest
// second, which the limit may have cut anywhere, is read again in one
// query, so only a second that fits one query can be paged.
type secondPager struct {
	store eventstore.Store
	max   int // the store's query cap; 0 = unknown
}

func (p *secondPager) QueryPage(ctx context.Context, f nostr.Filter, after Cursor, limit int) ([]*nostr.Event, Cursor, error) {
	if p.max > 0 && limit > p.max {
		limit = p.max // a capped query would look like a short, final one
	}
	if len(f.IDs) > 0 {
		return idsPage(ctx, p.store, p.max, f, after, limit)
	}
	var out []*nostr.Event
	until := f.Until
	if !after.IsZero() {
		rest, pos, err := p.second(ctx, f, after.CreatedAt, after.Pos, limit)
		if err != nil {
			return nil, Cursor{}, err
		}
		out = rest
		if len(out) == limit {
			return out, Cursor{CreatedAt: after.CreatedAt, ID: out[len(out)-1].ID, Pos: pos}, nil
		}
		if after.CreatedAt <= 0 {
			return out, Cursor{}, nil
		}
		below := after.CreatedAt - 1
		until = &below
	}
	if f.Since != nil && until != nil && *until < *f.Since {
		return out, Cursor{}, nil
	}
	need := limit - len(out)
	q := f
	q.Until, q.Limit = until, need
	ch, err := p.store.QueryEvents(ctx, q)
	if err != nil {
		return nil, Cursor{}, err
	}
	raw := collect(ch)
	// there may be older events; with an unknown cap, any answer may
	// have been cut, and only an empty one ends the walk. A filter naming
	// replaceable addresses is capped lower, at one event an address.
	capN := need
	if tl := nostr.GetTheoreticalLimit(q); tl > 0 && tl < capN {
		capN = tl
	}
	cut := len(raw) >= capN || (p.max == 0 && len(raw) > 0)
	if len(raw) == 0 {
		return out, Cursor{}, nil
	}
	// The store's answer is a superset of the matches (badger's tag
	// index also returns every value the wanted one is a prefix of), so
	// the boundary comes from the whole answer: every second newer than
	// its oldest came whole, whatever the impostors took of the limit.
	oldest := raw[0].CreatedAt
	for _, evt := range raw {
		oldest = min(oldest, evt.CreatedAt)
	}
	// raw holds at most need events and at least one at oldest, so the
	// newer matches always fit
	for _, evt := range keep(q, raw) {
		if evt.CreatedAt > oldest {
			out = append(out, evt)
		}
	}
	rest, pos, err := p.second(ctx, f, oldest, "", limit-len(out))
	if err != nil {
		return nil, Cursor{}, err
	}
	out = append(out, rest...)
	switch {
	case len(out) < limit && !cut:
		return out, Cursor{}, nil // the store had no more
	case len(rest) == 0:
		// nothing of that second matches (or it emptied under us); go
		// on below it
		return out, Cursor{CreatedAt: oldest, ID: raw[len(raw)-1].ID}, nil
	}
	return out, Cursor{CreatedAt: oldest, ID: out[len(out)-1].ID, Pos: pos}, nil
}

// second is up to n events of second `at` after position `after`, and
// the position of the last.
func (p *secondPager) second(ctx context.Context, f nostr.Filter, at nostr.Timestamp, after string, n int) ([]*nostr.Event, string, error) {
	if n <= 0 {
		return nil, after, nil
	}
	// no way to resume inside the second: read it in one query, and
	// refuse unless that query reached past it; positions are ids. (No
	// since: some stores treat it as exclusive.)
	q := f
	q.Until = &at
	q.Limit = PageSize
	if p.max > 0 {
		q.Limit = p.max
	}
	ch, err := p.store.QueryEvents(ctx, q)
	if err != nil {
		return nil, "", err
	}
	all := collect(ch)
	raw := keep(q, all)
	if len(all) >= q.Limit && (len(raw) == 0 || raw[len(raw)-1].CreatedAt == at) {
		return nil, "", fmt.Errorf("%w (%d or more events at created_at %d)", ErrSecondTooFull, q.Limit, at)
	}
	var out []*nostr.Event
	for _, evt := range raw {
		if evt.CreatedAt != at {
			break
		}
		if after != "" && evt.ID >= after {
			continue
		}
		if out = append(out, evt); len(out) == n {
			break
		}
	}
	if len(out) == 0 {
		return nil, after, nil
	}
	return out, out[len(out)-1].ID, nil
}

// keep is a query's answer as paging needs it: each event once, only
// those matching q, newest first (then by id). Stores are looser: badger's
// ids queries ignore since and until, and a kind named twice returns its
// events twice.
func keep(q nostr.Filter, evs []*nostr.Event) []*nostr.Event {
	seen := make(map[string]struct{}, len(evs))
	out := make([]*nostr.Event, 0, len(evs)) // callers still read evs
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
