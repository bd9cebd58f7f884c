package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/fiatjaf/eventstore"
	"github.com/jackc/pgx/v5"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/relay/store"
)

// MaxFilterValues bounds the ids, authors, kinds and tag values of one
// filter together: a filter is a query plan, and a stranger's must stay
// small (the relay's own limits are far below this).
const MaxFilterValues = 10_000

// ErrFilterTooLarge: a filter names more values than MaxFilterValues.
var ErrFilterTooLarge = errors.New("invalid: filter too large")

const columns = "id, pubkey, created_at, kind, tags, content, sig"

// where is f as a SQL condition over bound parameters only: no value of
// a filter is ever part of the SQL text. after, when set, is the cursor
// (created_at, id) to read below.
func where(f nostr.Filter, after store.Cursor) (string, []any, error) {
	n := len(f.IDs) + len(f.Authors) + len(f.Kinds)
	for _, v := range f.Tags {
		n += len(v)
	}
	if n > MaxFilterValues {
		return "", nil, fmt.Errorf("%w: %d ids, authors, kinds and tag values, at most %d", ErrFilterTooLarge, n, MaxFilterValues)
	}
	var conds []string
	var args []any
	arg := func(v any) string { args = append(args, v); return "$" + strconv.Itoa(len(args)) }
	// nil means "any"; an empty list matches nothing (nostr.Filter.Matches)
	if f.IDs != nil {
		conds = append(conds, "id = ANY("+arg(f.IDs)+"::text[])")
	}
	if f.Authors != nil {
		conds = append(conds, "pubkey = ANY("+arg(f.Authors)+"::text[])")
	}
	if f.Kinds != nil {
		conds = append(conds, "kind = ANY("+arg(f.Kinds)+"::integer[])")
	}
	for name, values := range f.Tags {
		if values == nil {
			continue
		}
		if len(name) == 1 {
			tv := make([]string, len(values))
			for i, v := range values {
				tv[i] = name + ":" + v
			}
			conds = append(conds, "tagvalues && "+arg(tv)+"::text[]")
			continue
		}
		// a longer tag name is not indexed: matched exactly, row by row
		conds = append(conds, "EXISTS (SELECT 1 FROM jsonb_array_elements(tags) t WHERE t->>0 = "+
			arg(name)+" AND t->>1 = ANY("+arg(values)+"::text[]))")
	}
	if f.Since != nil {
		conds = append(conds, "created_at >= "+arg(int64(*f.Since)))
	}
	if f.Until != nil {
		conds = append(conds, "created_at <= "+arg(int64(*f.Until)))
	}
	if !after.IsZero() {
		conds = append(conds, "(created_at, id) < ("+arg(int64(after.CreatedAt))+", "+arg(after.ID)+"::text)")
	}
	if len(conds) == 0 {
		return "true", args, nil
	}
	return strings.Join(conds, " AND "), args, nil
}

// QueryPage is store.Pager's: up to limit matches below the cursor,
// newest first, and where to go on from (zero after the last page).
func (s *Store) QueryPage(ctx context.Context, f nostr.Filter, after store.Cursor, limit int) ([]*nostr.Event, store.Cursor, error) {
	limit = min(max(limit, 1), s.opts.MaxLimit)
	cond, args, err := where(f, after)
	if err != nil {
		return nil, store.Cursor{}, err
	}
	args = append(args, limit)
	rows, err := s.pool.Query(ctx, "SELECT "+columns+" FROM events WHERE "+cond+
		" ORDER BY created_at DESC, id DESC LIMIT $"+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, store.Cursor{}, err
	}
	evs, err := pgx.CollectRows(rows, scanEvent)
	if err != nil {
		return nil, store.Cursor{}, err
	}
	if len(evs) < limit {
		return evs, store.Cursor{}, nil
	}
	last := evs[len(evs)-1]
	return evs, store.Cursor{CreatedAt: last.CreatedAt, ID: last.ID}, nil
}

// QueryEvents answers f with its matches, newest first, at most its
// limit (a quarter of MaxLimit when it has none, like badger). A search
// filter gets nothing: the relay's search hook answers those.
func (s *Store) QueryEvents(ctx context.Context, f nostr.Filter) (chan *nostr.Event, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = max(s.opts.MaxLimit/4, 1)
	}
	if tl := nostr.GetTheoreticalLimit(f); tl == 0 || f.Search != "" || f.LimitZero {
		limit = 0
	} else if tl > 0 && tl < limit {
		limit = tl
	}
	var evs []*nostr.Event
	if limit > 0 {
		var err error
		if evs, _, err = s.QueryPage(ctx, f, store.Cursor{}, limit); err != nil {
			return nil, err
		}
	}
	ch := make(chan *nostr.Event, len(evs))
	for _, e := range evs {
		ch <- e
	}
	close(ch)
	return ch, nil
}

// CountEvents is eventstore.Counter's: how many events match f, exactly.
func (s *Store) CountEvents(ctx context.Context, f nostr.Filter) (int64, error) {
	cond, args, err := where(f, store.Cursor{})
	if err != nil {
		return 0, err
	}
	var n int64
	err = s.pool.QueryRow(ctx, "SELECT count(*) FROM events WHERE "+cond, args...).Scan(&n)
	return n, err
}

// AtAddress is store.Addressed's: one lookup of the addr column's unique
// index. A replaceable or addressable event's address holds one row.
func (s *Store) AtAddress(ctx context.Context, evt *nostr.Event) ([]*nostr.Event, error) {
	a := address(evt)
	if a == nil {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, "SELECT "+columns+" FROM events WHERE addr = $1", *a)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanEvent)
}

func scanEvent(row pgx.CollectableRow) (*nostr.Event, error) {
	e := &nostr.Event{}
	var at int64
	if err := row.Scan(&e.ID, &e.PubKey, &at, &e.Kind, &e.Tags, &e.Content, &e.Sig); err != nil {
		return nil, err
	}
	e.CreatedAt = nostr.Timestamp(at)
	if e.Tags == nil {
		e.Tags = nostr.Tags{}
	}
	return e, nil
}

var (
	_ eventstore.Store   = (*Store)(nil)
	_ eventstore.Counter = (*Store)(nil)
	_ store.Pager        = (*Store)(nil)
	_ store.Replacer     = (*Store)(nil)
	_ store.Feed         = (*Store)(nil)
	_ store.Addressed    = (*Store)(nil)
)
