package storeq

import (
	"context"
	"fmt"
	"slices"

	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
)

// secondPager builds cursor pages out of an eventstore.Store's queries,
// which are ordered by created_at alone and cut at a limit: every second
// newer than a page's oldest one came whole, and that oldest second, which
// the limit may have cut anywhere, is read through the SecondReader, so a
// cursor always lands where the reader can resume.
type secondPager struct {
	store   eventstore.Store
	seconds SecondReader // nil: only seconds that fit one query
	max     int          // the store's query cap; 0 = unknown
}

func (p *secondPager) QueryPage(ctx context.Context, f nostr.Filter, after Cursor, limit int) ([]*nostr.Event, Cursor, error) {
	if p.max > 0 && limit > p.max {
		limit = p.max // a capped query would look like a short, final one
	}
	if len(f.IDs) > 0 {
		return p.idsPage(ctx, f, after, limit)
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
	// have been cut, and only an empty one ends the walk
	cut := len(raw) >= need || (p.max == 0 && len(raw) > 0)
	page := keep(q, raw)
	if len(page) == 0 {
		return out, Cursor{}, nil
	}
	page = page[:min(len(page), need)]
	oldest := page[len(page)-1].CreatedAt
	for _, evt := range page {
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
		// the second emptied under us (deletions); go on below it
		return out, Cursor{CreatedAt: oldest, ID: page[len(page)-1].ID}, nil
	}
	return out, Cursor{CreatedAt: oldest, ID: out[len(out)-1].ID, Pos: pos}, nil
}

// idsPage answers an ids filter: one query holds every match (ids are
// unique), ordered by created_at and id.
func (p *secondPager) idsPage(ctx context.Context, f nostr.Filter, after Cursor, limit int) ([]*nostr.Event, Cursor, error) {
	q := f
	q.Limit = len(f.IDs)
	ch, err := p.store.QueryEvents(ctx, q)
	if err != nil {
		return nil, Cursor{}, err
	}
	all := keep(q, collect(ch))
	if !after.IsZero() {
		i := slices.IndexFunc(all, func(e *nostr.Event) bool {
			return e.CreatedAt < after.CreatedAt || (e.CreatedAt == after.CreatedAt && e.ID < after.ID)
		})
		if i < 0 {
			i = len(all)
		}
		all = all[i:]
	}
	if len(all) <= limit {
		return all, Cursor{}, nil
	}
	last := all[limit-1]
	return all[:limit], Cursor{CreatedAt: last.CreatedAt, ID: last.ID}, nil
}

// second is up to n events of second `at` after position `after`, and
// the position of the last.
func (p *secondPager) second(ctx context.Context, f nostr.Filter, at nostr.Timestamp, after string, n int) ([]*nostr.Event, string, error) {
	if n <= 0 {
		return nil, after, nil
	}
	if p.seconds != nil {
		return p.seconds.QuerySecond(ctx, f, at, after, n)
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

// keep is a query's answer as storeq needs it: each event once, only
// those matching q, newest first (then by id). Stores are looser: badger's
// ids queries ignore since and until, and a kind named twice returns its
// events twice.
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
