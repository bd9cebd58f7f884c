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
	URL    string        // the shared database
	Key    int64         // the lock; 0 = Key
	Retry  time.Duration // how often a follower tries the lock; 0 = 2s
	Check  time.Duration // how often the leader checks its session; 0 = 1s
	Logger *slog.Logger
}

// Run takes part in the election until ctx ends. Whenever this instance
// holds the lock it calls lead with a context that ends when the lock is
// lost or ctx ends, and waits for lead to return before it lets the lock
// go: lead must stop everything it started before it returns.
func Run(ctx context.Context, o Options, lead func(ctx context.Context)) {
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
func term(ctx context.Context, o Options, log *slog.Logger, lead func(context.Context)) error {
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
	log.Info("leading: this instance runs the agent")
	leadCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		lead(leadCtx)
	}()
	err = hold(leadCtx, conn, o.Check, done)
	stop()
	<-done
	if ctx.Err() != nil || errors.Is(err, errLeadEnded) {
		// a clean shutdown: let the next leader in at once
		unlockCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
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
func hold(ctx context.Context, conn *pgx.Conn, every time.Duration, done <-chan struct{}) error {
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
		pingCtx, cancel := context.WithTimeout(ctx, every)
		err := conn.Ping(pingCtx)
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
