package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
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

// The order of the log. Every entry's seq is drawn from one sequence
// while its transaction runs, and becomes visible when that transaction
// commits; transactions commit in any order, so a reader can find seq 8
// committed while 7 is not yet (or never will be: its transaction rolled
// back). Nothing serializes the writers. A reader instead delivers
// entries strictly in seq order and moves past a missing seq only once
// it has proof that no transaction can still commit it:
//
//   - a seq is drawn only by a statement that inserts into changes
//     (nextSeq), so its transaction holds the lock writers take on
//     changes (RowExclusiveLock, taken as the statement starts) from
//     before it draws until it ends;
//   - if a read shows an entry above a missing seq m, m was drawn before
//     that entry (the sequence hands numbers out in order), so before
//     the read began: the transaction that drew it, if it still runs,
//     holds that lock after the read;
//   - once every transaction that held the lock after that read has
//     ended (pg_locks), m is visible to any later read if it committed,
//     and never will be if it is not.
//
// So every reader delivers the same entries in the same order, each
// once, whatever order they committed in. A missing seq holds a reader
// up only while a transaction writing to the log runs (a statement of a
// few milliseconds); transactions that do not write to it, however long,
// hold up nothing.

// querier runs one query: a pool or a connection.
type rowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// logWriters lists the transactions (virtual ids) now holding the
// writers' lock on changes.
func logWriters(ctx context.Context, q rowQuerier) ([]string, error) {
	var ids []string
	err := q.QueryRow(ctx, `SELECT coalesce(array_agg(virtualtransaction), '{}') FROM pg_locks
		WHERE locktype = 'relation' AND mode = 'RowExclusiveLock' AND granted
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND relation = 'changes'::regclass`).Scan(&ids)
	return ids, err
}

// stillRunning is the transactions of held that are in now.
func stillRunning(held, now []string) []string {
	var out []string
	for _, id := range held {
		if slices.Contains(now, id) {
			out = append(out, id)
		}
	}
	return out
}

// Head is the newest entry's seq, 0 for an empty log, once no entry
// below it can still appear: a follower that has just read the whole
// store starts there and must not skip one committing late.
func (s *Store) Head(ctx context.Context) (int64, error) {
	var head int64
	if err := s.pool.QueryRow(ctx, "SELECT coalesce(max(seq), 0) FROM changes").Scan(&head); err != nil {
		return 0, err
	}
	held, err := logWriters(ctx, s.pool)
	if err != nil {
		return 0, err
	}
	began, wait := time.Now(), time.Millisecond
	warned := false
	for len(held) > 0 {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(wait*2, 100*time.Millisecond)
		now, err := logWriters(ctx, s.pool)
		if err != nil {
			return 0, err
		}
		held = stillRunning(held, now)
		if !warned && len(held) > 0 && time.Since(began) > heldWarn {
			warned = true
			s.log.Warn("reading the change log's head waits for transactions writing to it", "transactions", held)
		}
	}
	return head, nil
}

// Lag is store.Feed's: two index reads of the log.
func (s *Store) Lag(ctx context.Context, after int64) (int64, time.Duration, error) {
	var head int64
	var waited *float64
	// the entry's age by the database's own clock, which dated it: an
	// instance's clock, ahead or behind, must not make it look late
	err := s.pool.QueryRow(ctx, `SELECT (SELECT coalesce(max(seq), 0) FROM changes),
		(SELECT extract(epoch FROM clock_timestamp() - at) FROM changes WHERE seq > $1 ORDER BY seq LIMIT 1)`, after).Scan(&head, &waited)
	if err != nil || waited == nil {
		return head, 0, err
	}
	return head, time.Duration(max(*waited, 0) * float64(time.Second)), nil
}

// Pending is store.Feed's: one range read of the log's newest entries
// (those after `after`, which a follower near the head keeps few),
// shared by the callers that ask while no read is on its way.
func (s *Store) Pending(ctx context.Context, after int64) (int64, error) {
	return s.heads.pending(ctx, after)
}

// Follow is store.Feed's: the entries after `after`, then each new one,
// in seq order (see above). It listens on a connection of its own and
// reads the log when told and every pollEvery; a broken connection is
// reconnected with backoff, and reading resumes from the last entry fn
// received, so nothing is skipped or repeated.
func (s *Store) Follow(ctx context.Context, after int64, fn func(store.Change) error) error {
	return s.following(ctx, after, fn, false)
}

// Tail is store.Feed's: Follow for this store handle's own follower.
// The entries this handle committed come with their Seq, Op and Origin
// and no Event, and are known without reading the log back. One Tail at
// a time per handle.
func (s *Store) Tail(ctx context.Context, after int64, fn func(store.Change) error) error {
	if !s.own.start() {
		return errors.New("postgres store: a Tail is already reading this handle's log")
	}
	defer s.own.stop()
	return s.following(ctx, after, fn, true)
}

func (s *Store) following(ctx context.Context, after int64, fn func(store.Change) error, tail bool) error {
	cursor := after
	backoff := 100 * time.Millisecond
	for {
		err := s.follow(ctx, &cursor, fn, tail)
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

// gapRecheck is how soon a reader held up by a missing seq reads again
// when nothing tells it to; it doubles up to pollEvery.
const gapRecheck = 5 * time.Millisecond

// ownRecheck is how soon a Tail whose own entries wait behind entries of
// other instances it has not read reads again when nothing tells it to.
// Those entries' writers notify within notifyEvery of their commit, so
// the notification comes first; reading sooner only reads the log again
// for nothing (with two instances writing, the 5 ms of gapRecheck made
// every follower read twice per notification). Requests that must see
// the other instances' entries do not wait for it (Pending wakes the
// reader).
const ownRecheck = 2 * notifyEvery

// follow is one connection's worth of Follow.
func (s *Store) follow(ctx context.Context, cursor *int64, fn func(store.Change) error, tail bool) error {
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
	r := &reader{s: s, conn: conn, cursor: cursor, fn: fn, tail: tail}
	read, recheck := true, gapRecheck
	var lastRead, recheckAt time.Time
	for {
		if read {
			if r.blocked && !r.proven {
				if err := r.prove(ctx); err != nil {
					return err
				}
			}
			more, err := r.read(ctx)
			if err != nil {
				return err
			}
			lastRead = time.Now()
			if more {
				continue
			}
		}
		if tail {
			if err := r.ownEntries(); err != nil {
				return err
			}
		}
		// held up by a missing seq: read again soon, even if our own
		// commits keep waking us meanwhile
		switch {
		case r.blocked:
			if recheckAt.IsZero() {
				recheckAt, recheck = time.Now().Add(recheck), min(recheck*2, pollEvery)
			}
		case tail && s.own.any(*cursor):
			if recheckAt.IsZero() {
				recheckAt = time.Now().Add(ownRecheck)
			}
		default:
			recheckAt, recheck = time.Time{}, gapRecheck
		}
		deadline := lastRead.Add(pollEvery)
		if !recheckAt.IsZero() && recheckAt.Before(deadline) {
			deadline = recheckAt
		}
		read, err = r.wait(ctx, time.Until(deadline))
		if err != nil {
			return err
		}
		if !time.Now().Before(deadline) {
			read, recheckAt = true, time.Time{}
		}
	}
}

// reader is one follower's position and the proof it holds about the
// seqs it has not seen.
type reader struct {
	s      *Store
	conn   *pgx.Conn
	cursor *int64 // every entry up to it has been handed to fn or proven never to exist
	fn     func(store.Change) error
	tail   bool // this handle's own entries come from s.own, without events

	// a seq below horizon that a read found missing is proven never to
	// be committed once every transaction in held (the writers of the
	// log after that read) has ended: proven
	horizon int64
	held    []string // nil: not listed yet
	proven  bool
	seen    int64 // the newest seq the last read saw
	blocked bool  // the last read stopped at a seq that may still commit

	heldSince  time.Time // when the missing seq at the cursor was first met
	heldWarned bool
}

// heldWarn is how long a missing seq may hold a reader up before it says
// so: a transaction that drew it is still running.
const heldWarn = time.Second

// read hands fn the entries after the cursor that one read of the log
// can prove complete up to; more is true when the read was full.
func (r *reader) read(ctx context.Context) (more bool, err error) {
	// A saved event's entry that names it without its body (schema step
	// 6) takes it from events; one removed since (deleted, or replaced by
	// a newer version) finds none there and comes without its Event, as
	// the entry of its removal or replacement follows.
	rows, err := r.conn.Query(ctx, `SELECT snap.through, c.seq, c.op, c.origin, c.at, c.event,
			e.id, e.pubkey, e.created_at, e.kind, e.tags, e.content, e.sig
		FROM (SELECT (SELECT through FROM changes_pruned) AS through) snap
		LEFT JOIN LATERAL (
			SELECT seq, op, origin, at, id, CASE WHEN origin = $3 THEN NULL ELSE event END AS event
			FROM changes WHERE seq > $1 ORDER BY seq LIMIT $2) c ON true
		-- per entry, an index lookup (LIMIT keeps the planner from turning
		-- it into a join over a scan of the whole table)
		LEFT JOIN LATERAL (
			SELECT id, pubkey, created_at, kind, tags, content, sig FROM events
			WHERE c.op = 1 AND c.event IS NULL AND c.origin <> $3 AND events.id = c.id LIMIT 1) e ON true
		ORDER BY c.seq`, *r.cursor, feedBatch, r.ownOrigin())
	if err != nil {
		return false, err
	}
	var (
		through int64
		batch   []store.Change
	)
	for rows.Next() {
		var (
			seq                      *int64
			op                       *int16
			origin                   *string
			at                       *time.Time
			body                     []byte
			id, pubkey, content, sig *string
			when                     *int64
			kind                     *int32
			tags                     []byte
		)
		if err := rows.Scan(&through, &seq, &op, &origin, &at, &body,
			&id, &pubkey, &when, &kind, &tags, &content, &sig); err != nil {
			rows.Close()
			return false, err
		}
		if seq == nil {
			continue
		}
		c := store.Change{Seq: *seq, Op: store.Op(*op), Origin: *origin, At: *at}
		switch {
		case body != nil:
			c.Event = &nostr.Event{}
			if err := c.Event.UnmarshalJSON(body); err != nil {
				rows.Close()
				return false, fmt.Errorf("change %d: %w", c.Seq, err)
			}
		case id != nil:
			c.Event = &nostr.Event{ID: *id, PubKey: *pubkey, CreatedAt: nostr.Timestamp(*when),
				Kind: int(*kind), Tags: nostr.Tags{}, Content: *content, Sig: *sig}
			if err := json.Unmarshal(tags, &c.Event.Tags); err != nil {
				rows.Close()
				return false, fmt.Errorf("change %d: the tags of event %s: %w", c.Seq, *id, err)
			}
		}
		batch = append(batch, c)
	}
	if err := rows.Err(); err != nil {
		return false, err
	}
	if len(batch) > 0 {
		r.seen = max(r.seen, batch[len(batch)-1].Seq)
	}
	r.blocked = false
	defer func() {
		if !r.blocked {
			r.heldSince, r.heldWarned = time.Time{}, false
		}
	}()
	for _, c := range batch {
		for c.Seq > *r.cursor+1 {
			missing := *r.cursor + 1
			if r.tail {
				// committed here after the snapshot was taken
				if op, ok := r.s.own.take(missing); ok {
					if err := r.deliver(store.Change{Seq: missing, Op: op, Origin: r.s.opts.Origin, At: time.Now()}); err != nil {
						return false, err
					}
					continue
				}
			}
			if missing <= through {
				return false, fmt.Errorf("%w (entries after %d, pruned through %d)", store.ErrFeedTruncated, *r.cursor, through)
			}
			if missing >= r.horizon {
				// a gap the proof in hand does not cover: start another
				r.horizon, r.held, r.proven = c.Seq, nil, false
			}
			if !r.proven {
				r.blocked = true // its transaction may still commit it
				if r.heldSince.IsZero() {
					r.heldSince = time.Now()
				} else if !r.heldWarned && time.Since(r.heldSince) > heldWarn {
					r.heldWarned = true
					r.s.log.Warn("the change log's reader waits for transactions writing to it",
						"missing", missing, "waiting", time.Since(r.heldSince).Round(time.Millisecond), "transactions", r.held)
				}
				if r.s.readHook != nil {
					r.s.readHook(r.seen, *r.cursor)
				}
				return false, nil
			}
			*r.cursor = c.Seq - 1 // rolled back: never to be committed
		}
		if c.Seq <= *r.cursor {
			continue
		}
		if r.tail && c.Origin == r.s.opts.Origin {
			r.s.own.take(c.Seq)
		}
		if err := r.deliver(c); err != nil {
			return false, err
		}
	}
	if r.s.readHook != nil {
		r.s.readHook(r.seen, *r.cursor)
	}
	return len(batch) == feedBatch, nil
}

// prove moves the proof about the missing seqs below horizon on: the
// first call lists the log's writers, which a read has just shown to
// hold any transaction that drew one of them; a later call finds which
// of those still run, and when none does, they are proven.
func (r *reader) prove(ctx context.Context) error {
	now, err := logWriters(ctx, r.conn)
	if err != nil {
		return err
	}
	if r.held == nil {
		r.held = now
	} else {
		r.held = stillRunning(r.held, now)
	}
	if len(r.held) == 0 {
		r.held = []string{}
		r.proven = true
	}
	return nil
}

// ownOrigin is the origin whose bodies a read leaves out: this handle's
// for a Tail, none for Follow.
func (r *reader) ownOrigin() string {
	if r.tail {
		return r.s.opts.Origin
	}
	return ""
}

func (r *reader) deliver(c store.Change) error {
	if err := r.fn(c); err != nil {
		return callbackError{err}
	}
	*r.cursor = c.Seq
	return nil
}

// ownEntries hands fn the entries this handle committed that follow the
// cursor without a gap.
func (r *reader) ownEntries() error {
	for {
		op, ok := r.s.own.take(*r.cursor + 1)
		if !ok {
			return nil
		}
		if err := r.deliver(store.Change{Seq: *r.cursor + 1, Op: op, Origin: r.s.opts.Origin, At: time.Now()}); err != nil {
			return err
		}
	}
}

// wait returns when there may be something to read (read true), when
// this handle committed something (a Tail's, read false) or after d.
func (r *reader) wait(ctx context.Context, d time.Duration) (read bool, err error) {
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var own <-chan struct{} // nil, never ready, for a Follow
	if r.tail {
		own = r.s.own.wake
	}
	var woken atomic.Bool // by wakeFollowers: read
	go func() {
		select {
		case <-own:
			cancel()
		case <-r.s.readNow:
			woken.Store(true)
			cancel()
		case <-wctx.Done():
		}
	}()
	for {
		n, err := r.conn.WaitForNotification(wctx)
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return false, ctx.Err()
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || pgconn.Timeout(err):
			if r.conn.IsClosed() {
				return false, errors.New("listen connection closed")
			}
			// timed out or told to: read; woken by a commit of ours: not
			return woken.Load() || !errors.Is(wctx.Err(), context.Canceled), nil
		default:
			return false, err
		}
		origin, seq, ok := parsePayload(n.Payload)
		switch {
		case !ok:
			return true, nil
		case r.tail && origin == r.s.opts.Origin:
			continue // ours: known already
		case seq > r.seen || r.blocked:
			return true, nil
		}
		// seen in the last read already
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
