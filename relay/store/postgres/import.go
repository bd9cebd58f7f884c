package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/relay/store"
)

// Import stores many events in one transaction and one round trip
// (snowclaw migrate), by the same rules as SaveEvent and ReplaceEvent: a
// stored id is skipped, a replaceable version older than the stored one
// is skipped. What it stores is logged like any other change, so
// instances running meanwhile see it. It returns how many it stored.
func (s *Store) Import(ctx context.Context, evs []*nostr.Event) (int, error) {
	var rows [][]any
	for _, evt := range evs {
		args, err := row(evt)
		if err != nil {
			return 0, err
		}
		rows = append(rows, args)
	}
	stored := 0
	var seqs []int64
	err := s.tx(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, args := range rows {
			if args[8].(*string) == nil {
				b.Queue(insertEvent+" ON CONFLICT DO NOTHING", args...)
			} else {
				b.Queue(insertEvent+replaceClause, args...)
			}
		}
		res := tx.SendBatch(ctx, b)
		var saved []*nostr.Event
		for i := range rows {
			tag, err := res.Exec()
			if err != nil {
				res.Close()
				return err
			}
			if tag.RowsAffected() > 0 {
				saved = append(saved, evs[i])
			}
		}
		if err := res.Close(); err != nil {
			return err
		}
		stored = len(saved)
		if stored == 0 {
			return nil
		}
		var err error
		seqs, err = s.logSaves(ctx, tx, saved)
		return err
	})
	if err == nil {
		s.committed(store.Saved, seqs...)
	}
	return stored, err
}
