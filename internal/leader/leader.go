// Package leader elects one instance among several that share a
// PostgreSQL database, for the work only one of them may do (the agent:
// one reply per message, one writer of its records).
//
// The leader is whoever holds a session-level advisory lock. PostgreSQL
// releases it when the session ends, so a leader that dies — its process
// killed, its machine gone — frees it as soon as the server notices: at
// once when the socket closes, within the TCP keepalive and user timeout
// set on the session (about 6 s) when the machine vanishes. A leader that
// can no longer reach the server steps down after one failed check (1 s,
// with a 1 s timeout), before the server gives the lock to anyone else, so
// two leaders never act at once. The others try again every Retry.
//
// A lease row renewed by the leader would work too; the advisory lock
// needs no table, no clock agreement between machines, and no renewal
// writes.
package leader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/jackc/pgx/v5"
)

// Key is the advisory lock of the agent's leadership ("snowclaw" in ASCII):
// every instance of one deployment must use the same.
const Key int64 = 0x736e6f77636c6177

// Options configure an election.
type Options struct {
	URL   string        // the shared database
	Key   int64         // the lock; 0 = Key
	Retry time.Duration // how often a follower tries the lock; 0 = 2s
	Check time.Duration // how often the leader checks its session; 0 = 1s
	// Position, when set, is recorded with every heartbeat: how far the
	// leader had got (its relay's position in the change log).
	Position func() int64
	Logger   *slog.Logger
}

// Previous is what the last leader left: when it was last seen alive and
// its position then (zero values: there was none).
type Previous struct {
	Alive    time.Time
	Position int64
}

// Run takes part in the election until ctx ends. Whenever this instance
// holds the lock it calls lead with a context that ends when the lock is
// lost or ctx ends, and waits for lead to return before it lets the lock
// go: lead must stop everything it started before it returns. lead is
// also told what the previous leader left (Previous): what it had
// received by then it had handled.
func Run(ctx context.Context, o Options, lead func(ctx context.Context, prev Previous)) {
	if o.Position == nil {
		o.Position = func() int64 { return 0 }
	}
	if o.Key == 0 {
		o.Key = Key
	}
	if o.Retry <= 0 {
		o.Retry = 2 * time.Second
	}
	if o.Check <= 0 {
		o.Check = time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	log := o.Logger.With("component", "leader")
	for ctx.Err() == nil {
		err := term(ctx, o, log, lead)
		if ctx.Err() != nil {
			return
		}
		log.Warn("leader election: connection lost; retrying", "err", err)
		wait(ctx, o.Retry)
	}
}

// term is one session: try the lock until it is ours, lead while it is.
func term(ctx context.Context, o Options, log *slog.Logger, lead func(context.Context, Previous)) error {
	conn, err := connect(ctx, o.URL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for {
		var got bool
		if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", o.Key).Scan(&got); err != nil {
			return err
		}
		if got {
			break
		}
		if !wait(ctx, o.Retry) {
			return ctx.Err()
		}
	}
	prev, err := lastAlive(ctx, conn, o.Key, o.Position())
	if err != nil {
		return err
	}
	log.Info("leading: this instance runs the agent")
	leadCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		lead(leadCtx, prev)
	}()
	err = hold(leadCtx, conn, o, done)
	stop()
	<-done
	if ctx.Err() != nil || errors.Is(err, errLeadEnded) {
		// a clean shutdown: a last heartbeat (lead has handled all it
		// received), then let the next leader in at once
		unlockCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn.Exec(unlockCtx, "UPDATE snowclaw_leader SET alive_at = now(), position = $2 WHERE key = $1", o.Key, o.Position())
		conn.Exec(unlockCtx, "SELECT pg_advisory_unlock($1)", o.Key)
		if ctx.Err() == nil {
			return err // lead gave up (its start failed): another may try
		}
		log.Info("stepped down: shutting down")
		return nil
	}
	log.Warn("stepped down: lost the database session", "err", err)
	return err
}

// errLeadEnded: lead returned while the lock was still held.
var errLeadEnded = errors.New("the leader's work ended by itself")

// hold checks the session every interval until it fails, ctx ends or
// lead returns (done).
func hold(ctx context.Context, conn *pgx.Conn, o Options, done <-chan struct{}) error {
	every := o.Check
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-done:
			return errLeadEnded
		case <-t.C:
		}
		// the check is the heartbeat: when did the leader last live
		pingCtx, cancel := context.WithTimeout(ctx, every)
		_, err := conn.Exec(pingCtx, "UPDATE snowclaw_leader SET alive_at = now(), position = $2 WHERE key = $1", o.Key, o.Position())
		cancel()
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("session check: %w", err)
		}
	}
}

// connect opens a dedicated session whose death the server notices
// quickly: keepalives and a user timeout on the server's side of the
// socket (ignored on a unix socket, where a dead peer closes it), and on
// ours.
func connect(ctx context.Context, url string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, errors.New("leader election: the database URL is not valid")
	}
	cfg.RuntimeParams["application_name"] = "snowclaw-leader"
	for k, v := range map[string]string{"tcp_keepalives_idle": "2", "tcp_keepalives_interval": "1", "tcp_keepalives_count": "3", "tcp_user_timeout": "5000"} {
		cfg.RuntimeParams[k] = v
	}
	d := &net.Dialer{KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: 2 * time.Second, Interval: time.Second, Count: 3}, Timeout: 5 * time.Second}
	cfg.DialFunc = d.DialContext
	return pgx.ConnectConfig(ctx, cfg)
}

// lastAlive reads the previous leader's heartbeat and starts this one's.
func lastAlive(ctx context.Context, conn *pgx.Conn, key, pos int64) (Previous, error) {
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS snowclaw_leader (
		key bigint PRIMARY KEY, alive_at timestamptz NOT NULL, position bigint NOT NULL DEFAULT 0)`); err != nil {
		return Previous{}, fmt.Errorf("leader heartbeat table: %w", err)
	}
	var (
		alive *time.Time
		at    *int64
	)
	err := conn.QueryRow(ctx, `WITH old AS (SELECT alive_at, position FROM snowclaw_leader WHERE key = $1)
		INSERT INTO snowclaw_leader (key, alive_at, position) VALUES ($1, now(), $2)
		ON CONFLICT (key) DO UPDATE SET alive_at = now(), position = $2
		RETURNING (SELECT alive_at FROM old), (SELECT position FROM old)`, key, pos).Scan(&alive, &at)
	if err != nil || alive == nil {
		return Previous{}, err
	}
	return Previous{Alive: *alive, Position: *at}, nil
}

// wait sleeps d or until ctx ends; false when ctx ended.
func wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
