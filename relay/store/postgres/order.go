package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/relay/store"
)

// EachInOrder is store.Sequencer's: the matches by seq, rows stored
// before positions were kept (seq NULL, position 0) first by created_at.
// It reads them in one query: it serves state rebuilt at start, whose
// events are few next to the store.
func (s *Store) EachInOrder(ctx context.Context, f nostr.Filter, fn func(evt *nostr.Event, pos int64) bool) error {
	cond, args, err := where(f, store.Cursor{})
	if err != nil {
		return err
	}
	rows, err := s.pool.Query(ctx, "SELECT "+columns+", coalesce(seq, 0) FROM events WHERE "+cond+
		" ORDER BY seq NULLS FIRST, created_at, id", args...)
	if err != nil {
		return err
	}
	all, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Positioned, error) {
		e := &nostr.Event{}
		var at, seq int64
		if err := row.Scan(&e.ID, &e.PubKey, &at, &e.Kind, &e.Tags, &e.Content, &e.Sig, &seq); err != nil {
			return store.Positioned{}, err
		}
		e.CreatedAt = nostr.Timestamp(at)
		if e.Tags == nil {
			e.Tags = nostr.Tags{}
		}
		return store.Positioned{Event: e, Pos: seq}, nil
	})
	if err != nil {
		return err
	}
	for _, p := range all {
		if !fn(p.Event, p.Pos) {
			return nil
		}
	}
	return nil
}

var _ store.Sequencer = (*Store)(nil)
