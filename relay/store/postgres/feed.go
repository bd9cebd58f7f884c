package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/relay/store"
)

// channel is the NOTIFY channel of the change log; a notification's
// payload is the new entry's seq.
const channel = "snowclaw_changes"

// pollEvery is how often a follower reads the log without being told:
// the safety net under a lost notification.
const pollEvery = time.Second

// feedAppName prefixes the application_name of a follower's connection.
const feedAppName = "snowclaw feed "

// feedBatch is how many entries one read of the log returns.
const feedBatch = 1000

// Head is the newest entry's seq, 0 for an empty log.
func (s *Store) Head(ctx context.Context) (int64, error) {
	var head int64
	err := s.pool.QueryRow(ctx, "SELECT coalesce(max(seq), 0) FROM changes").Scan(&head)
	return head, err
}

// Lag is store.Feed's: two index reads of the log.
func (s *Store) Lag(ctx context.Context, after int64) (int64, time.Time, error) {
	var head int64
	var oldest *time.Time
	err := s.pool.QueryRow(ctx, `SELECT (SELECT coalesce(max(seq), 0) FROM changes),
		(SELECT at FROM changes WHERE seq > $1 ORDER BY seq LIMIT 1)`, after).Scan(&head, &oldest)
	if err != nil || oldest == nil {
		return head, time.Time{}, err
	}
	return head, *oldest, nil
}

// Pending is store.Feed's: one range read of the log's newest entries
// (those after `after`, which a follower near the head keeps few).
func (s *Store) Pending(ctx context.Context, after int64) (int64, error) {
	var seq *int64
	err := s.pool.QueryRow(ctx, "SELECT max(seq) FROM changes WHERE seq > $1 AND origin <> $2", after, s.opts.Origin).Scan(&seq)
	if err != nil || seq == nil {
		return 0, err
	}
	return *seq, nil
}

// Follow is store.Feed's: the entries after `after`, then each new one,
// in seq (commit) order. It listens on a connection of its own and reads
// the log when told and every pollEvery; a broken connection is
// reconnected with backoff, and reading resumes from the last entry fn
// received, so nothing is skipped or repeated.
func (s *Store) Follow(ctx context.Context, after int64, fn func(store.Change) error) error {
	cursor := after
	backoff := 100 * time.Millisecond
	for {
		err := s.follow(ctx, &cursor, fn)
		var cbErr callbackError
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.As(err, &cbErr):
			return cbErr.err
		case errors.Is(err, store.ErrFeedTruncated):
			return err
		}
		s.log.Warn("change log connection lost; reconnecting", "err", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// callbackError is fn's own error, to be returned rather than retried.
type callbackError struct{ err error }

func (e callbackError) Error() string { return e.err.Error() }

// follow is one connection's worth of Follow.
func (s *Store) follow(ctx context.Context, cursor *int64, fn func(store.Change) error) error {
	cfg := s.pool.Config().ConnConfig.Copy()
	// named, so an operator can tell the followers in pg_stat_activity
	cfg.RuntimeParams["application_name"] = feedAppName + s.opts.Origin
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	// listen first, then read: an entry committed in between is both
	// read and notified, never neither
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		return err
	}
	if err := s.truncated(ctx, conn, *cursor); err != nil {
		return err
	}
	for {
		if err := s.catchUp(ctx, conn, cursor, fn); err != nil {
			return err
		}
		wctx, cancel := context.WithTimeout(ctx, pollEvery)
		_, err := conn.WaitForNotification(wctx)
		cancel()
		if err != nil && ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) && !pgconn.Timeout(err) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if conn.IsClosed() {
			return errors.New("listen connection closed")
		}
	}
}

// truncated is ErrFeedTruncated when entries right after `after` were
// pruned.
func (s *Store) truncated(ctx context.Context, conn *pgx.Conn, after int64) error {
	var through int64
	if err := conn.QueryRow(ctx, "SELECT through FROM changes_pruned").Scan(&through); err != nil {
		return err
	}
	if after < through {
		return fmt.Errorf("%w (asked for entries after %d, pruned through %d)", store.ErrFeedTruncated, after, through)
	}
	return nil
}

// catchUp hands fn every entry after *cursor, batch by batch.
func (s *Store) catchUp(ctx context.Context, conn *pgx.Conn, cursor *int64, fn func(store.Change) error) error {
	for {
		rows, err := conn.Query(ctx, "SELECT seq, op, origin, at, event FROM changes WHERE seq > $1 ORDER BY seq LIMIT $2", *cursor, feedBatch)
		if err != nil {
			return err
		}
		batch, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Change, error) {
			var c store.Change
			var op int16
			evt := &nostr.Event{}
			err := r.Scan(&c.Seq, &op, &c.Origin, &c.At, evt)
			c.Op, c.Event = store.Op(op), evt
			return c, err
		})
		if err != nil {
			return err
		}
		if len(batch) > 0 && batch[0].Seq > *cursor+1 {
			// a gap: a rolled-back seq, or pruning overtook a slow follower
			if err := s.truncated(ctx, conn, *cursor); err != nil {
				return err
			}
		}
		for _, c := range batch {
			if err := fn(c); err != nil {
				return callbackError{err}
			}
			*cursor = c.Seq
		}
		if len(batch) < feedBatch {
			return nil
		}
	}
}

// Prune deletes change-log entries older than Options.LogRetention,
// always keeping the newest (Head stays right), and records how far it
// went so a follower behind that learns it (ErrFeedTruncated).
func (s *Store) Prune(ctx context.Context) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		var through *int64
		err := tx.QueryRow(ctx, `WITH gone AS (
				DELETE FROM changes WHERE at < now() - make_interval(secs => $1::double precision)
				AND seq < (SELECT max(seq) FROM changes) RETURNING seq)
			SELECT max(seq) FROM gone`, s.opts.LogRetention.Seconds()).Scan(&through)
		if err != nil || through == nil {
			return err
		}
		_, err = tx.Exec(ctx, "UPDATE changes_pruned SET through = greatest(through, $1)", *through)
		return err
	})
}
