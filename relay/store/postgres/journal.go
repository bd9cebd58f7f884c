package postgres

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// journalChannel is the NOTIFY channel of the journals.
const journalChannel = "snowclaw_journal"

// Journal is a named, append-only list of records every instance shares:
// the erasure list and the audit trail of plugins/rights (its Journal
// interface). Each instance keeps the list in RAM; Open loads it and then
// hands over what the other instances append, within milliseconds (the
// same LISTEN/NOTIFY and safety poll as the change log), so that an
// erasure made on one instance is refused by all of them.
type Journal struct {
	s    *Store
	name string

	stop context.CancelFunc
	done sync.WaitGroup
}

// Journal returns the journal called name.
func (s *Store) Journal(name string) *Journal { return &Journal{s: s, name: name} }

// Open hands apply every stored record, oldest first, then follows the
// journal until Close.
func (j *Journal) Open(apply func(line []byte) error) error {
	ctx := context.Background()
	last, err := j.read(ctx, j.s.pool, 0, true, apply)
	if err != nil {
		return err
	}
	fctx, stop := context.WithCancel(context.Background())
	j.stop = stop
	j.done.Add(1)
	go func() {
		defer j.done.Done()
		j.follow(fctx, last, apply)
	}()
	return nil
}

// querier is a pool or a connection.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// read applies the records after seq (all of them when own, else only
// other instances' ones) and returns the last seq read.
func (j *Journal) read(ctx context.Context, q querier, after int64, own bool, apply func([]byte) error) (int64, error) {
	rows, err := q.Query(ctx, "SELECT seq, origin, line FROM journal WHERE name = $1 AND seq > $2 ORDER BY seq", j.name, after)
	if err != nil {
		return after, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			seq    int64
			origin string
			line   []byte
		)
		if err := rows.Scan(&seq, &origin, &line); err != nil {
			return after, err
		}
		if own || origin != j.s.opts.Origin {
			if err := apply(line); err != nil {
				j.s.log.Error("journal record not applied", "journal", j.name, "seq", seq, "err", err)
			}
		}
		after = seq
	}
	return after, rows.Err()
}

// follow applies what other instances append, until ctx ends.
func (j *Journal) follow(ctx context.Context, last int64, apply func([]byte) error) {
	for ctx.Err() == nil {
		err := j.listen(ctx, &last, apply)
		if ctx.Err() != nil {
			return
		}
		j.s.log.Warn("journal connection lost; reconnecting", "journal", j.name, "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (j *Journal) listen(ctx context.Context, last *int64, apply func([]byte) error) error {
	conn, err := pgx.ConnectConfig(ctx, j.s.pool.Config().ConnConfig)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+journalChannel); err != nil {
		return err
	}
	for {
		if *last, err = j.read(ctx, conn, *last, false, apply); err != nil {
			return err
		}
		wctx, cancel := context.WithTimeout(ctx, pollEvery)
		_, err := conn.WaitForNotification(wctx)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) && !pgconn.Timeout(err) {
			return err
		}
	}
}

// Append stores lines in one transaction. Appends are taken in turn (an
// advisory lock until commit), so seq order is commit order and a
// follower that has read up to a seq has missed nothing below it.
func (j *Journal) Append(lines ...[]byte) error {
	if len(lines) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return j.s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockJournal); err != nil {
			return err
		}
		for _, l := range lines {
			if _, err := tx.Exec(ctx, "INSERT INTO journal (name, origin, line) VALUES ($1, $2, $3)", j.name, j.s.opts.Origin, l); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, "SELECT pg_notify($1, $2)", journalChannel, j.name)
		return err
	})
}

// Close stops following.
func (j *Journal) Close() error {
	if j.stop != nil {
		j.stop()
		j.done.Wait()
	}
	return nil
}
