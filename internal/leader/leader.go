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
// writes. The leader does keep a heartbeat row (snowclaw_leader), but
// only as a record: its name, how far it had got, when it was last seen.
// Its successor reads it to know where to take over, and an instance
// standing by reads it to say who leads.
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
	// Name is this instance's name among the candidates, recorded while
	// it leads so the others can log who does.
	Name   string
	Logger *slog.Logger
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
	var told standby
	for ctx.Err() == nil {
		err := term(ctx, o, log, &told, lead)
		if ctx.Err() != nil {
			return
		}
		log.Warn("leader election: connection lost; retrying", "err", err)
		wait(ctx, o.Retry)
	}
}

// standby is what an instance standing by last logged about the leader:
// it says so once, and again only when another instance leads.
type standby struct {
	told   bool
	leader string
}

// term is one session: try the lock until it is ours, lead while it is.
func term(ctx context.Context, o Options, log *slog.Logger, told *standby, lead func(context.Context, Previous)) error {
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
		cur := readLeader(ctx, conn, o.Key)
		log.Debug("the lock is held: standing by", "leader", cur.name())
		if !told.told || told.leader != cur.Name {
			*told = standby{told: true, leader: cur.Name}
			args := []any{"leader", cur.name()}
			if cur.Known {
				args = append(args, "leader_position", cur.Position, "leader_heartbeat_age", cur.Age.Round(time.Millisecond))
			}
			log.Info("standing by: another instance runs the agent", args...)
		}
		if !wait(ctx, o.Retry) {
			return ctx.Err()
		}
	}
	*told = standby{}
	prev, err := lastAlive(ctx, conn, o.Key, o.Position(), o.Name)
	if err != nil {
		return err
	}
	log.Info("leading: this instance runs the agent", "instance", o.Name)
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
// Only the lock holder changes the table, so its schema changes here
// never race (holder came after the first release: added if missing).
func lastAlive(ctx context.Context, conn *pgx.Conn, key, pos int64, name string) (Previous, error) {
	for _, ddl := range []string{`CREATE TABLE IF NOT EXISTS snowclaw_leader (
		key bigint PRIMARY KEY, alive_at timestamptz NOT NULL, position bigint NOT NULL DEFAULT 0)`,
		`ALTER TABLE snowclaw_leader ADD COLUMN IF NOT EXISTS holder text NOT NULL DEFAULT ''`} {
		if _, err := conn.Exec(ctx, ddl); err != nil {
			return Previous{}, fmt.Errorf("leader heartbeat table: %w", err)
		}
	}
	var (
		alive *time.Time
		at    *int64
	)
	err := conn.QueryRow(ctx, `WITH old AS (SELECT alive_at, position FROM snowclaw_leader WHERE key = $1)
		INSERT INTO snowclaw_leader (key, alive_at, position, holder) VALUES ($1, now(), $2, $3)
		ON CONFLICT (key) DO UPDATE SET alive_at = now(), position = $2, holder = $3
		RETURNING (SELECT alive_at FROM old), (SELECT position FROM old)`, key, pos, name).Scan(&alive, &at)
	if err != nil || alive == nil {
		return Previous{}, err
	}
	return Previous{Alive: *alive, Position: *at}, nil
}

// leaderRow is what the heartbeat row says of the leader: its name, its
// position in the change log and how long ago it last beat.
type leaderRow struct {
	Known    bool // false: no row yet (the leader has not written it), or unreadable
	Name     string
	Position int64
	Age      time.Duration // by the database's clock, so machines need not agree
}

func (c leaderRow) name() string {
	if c.Name == "" {
		return "unknown"
	}
	return c.Name
}

// readLeader reads the heartbeat row. Failing to is no reason to end the
// session: the row is a record, the lock is the truth.
func readLeader(ctx context.Context, conn *pgx.Conn, key int64) leaderRow {
	var c leaderRow
	var age float64
	err := conn.QueryRow(ctx, `SELECT holder, position, extract(epoch FROM now() - alive_at)::float8
		FROM snowclaw_leader WHERE key = $1`, key).Scan(&c.Name, &c.Position, &age)
	if err != nil {
		return leaderRow{}
	}
	c.Known, c.Age = true, time.Duration(age*float64(time.Second))
	return c
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
