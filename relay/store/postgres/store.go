// Package postgres is the relay's PostgreSQL event store: the one several
// relay instances share. It implements eventstore.Store and Counter,
// store.Pager (cursor pages straight from the primary-key order),
// store.Replacer (NIP-01 replacement settled in the database) and
// store.Feed (a change log in commit order, pushed by LISTEN/NOTIFY).
//
// It is written on pgx rather than on eventstore's postgresql backend,
// for three reasons found reading that backend at the version go.mod pins:
// its tagvalues column keeps tag values without their names, so
// #h:["x"] also matches ["p","x"] (an access hole for a relay whose read
// rule keys on h tags, and inexact answers for everyone); its
// ReplaceEvent is a query, then a delete, then an insert, outside any
// transaction, so two instances replacing one address can both win or
// both lose; and it has no change log, which several instances need to
// see each other's writes. Here every value of a filter is a bound
// parameter, tags are kept as name:value, replaceable addresses are a
// unique column, and every change is logged in its own transaction.
//
// Schema (schema.go): events(id, pubkey, created_at, kind, tags jsonb,
// content, sig, tagvalues text[], addr), changes(seq, op, origin, event,
// at), versioned in snowclaw_schema and migrated under an advisory lock.
package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Options configure the store.
type Options struct {
	// Origin is this process's id in the change log; random when empty.
	Origin string
	// MaxLimit caps one query's events (default 5000).
	MaxLimit int
	// LogRetention is how long change-log entries are kept (default 7
	// days): a follower further behind must rebuild from the store.
	LogRetention time.Duration
	// Logger receives the feed's reconnects and pruning errors.
	Logger *slog.Logger
}

// Store is a PostgreSQL event store.
type Store struct {
	pool    *pgxpool.Pool
	where   string // the URL without its password, for messages
	opts    Options
	log     *slog.Logger
	stop    context.CancelFunc
	pruned  sync.WaitGroup // the pruning and notifying goroutines
	commits *committer
	heads   *headReads
	note    *notifier
	readNow chan struct{} // wakes a follower waiting for a notification (wakeFollowers)
	own     ownLog

	readHook func(seen, cursor int64) // tests: after each read of the log by a follower
}

// ErrOpen wraps every failure to reach or prepare the database.
var ErrOpen = errors.New("postgres store")

// Open connects to the database at rawURL, migrates its schema and starts
// pruning the change log. A bad URL, an unreachable server or a schema
// newer than this binary is an error naming the URL (never its password).
func Open(ctx context.Context, rawURL string, opts Options) (*Store, error) {
	where := Describe(rawURL)
	fail := func(err error) error { return fmt.Errorf("%w at %s: %w", ErrOpen, where, err) }
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fail(errors.New("not a PostgreSQL URL (postgres://user:password@host:5432/database)"))
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "snowclaw"
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	if opts.MaxLimit <= 0 {
		opts.MaxLimit = 5000
	}
	if opts.LogRetention <= 0 {
		opts.LogRetention = 7 * 24 * time.Hour
	}
	if opts.Origin == "" {
		opts.Origin = NewOrigin()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fail(err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fail(err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fail(err)
	}
	s := &Store{pool: pool, where: where, opts: opts, log: opts.Logger}
	pctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	s.own.wake = make(chan struct{}, 1)
	s.heads = &headReads{s: s}
	s.note = &notifier{s: s, kick: make(chan struct{}, 1)}
	s.readNow = make(chan struct{}, 1)
	s.commits = newCommitter(s, pctx)
	s.pruned.Add(2)
	go s.pruneLoop(pctx)
	go func() {
		defer s.pruned.Done()
		s.note.run(pctx)
	}()
	return s, nil
}

// CheckURL reports whether rawURL is one pgx can connect with, without
// connecting (config validation).
func CheckURL(rawURL string) error {
	if _, err := pgxpool.ParseConfig(rawURL); err != nil {
		return fmt.Errorf("%s is not a PostgreSQL URL (postgres://user:password@host:5432/database)", Describe(rawURL))
	}
	return nil
}

// NewOrigin is a random process id for Options.Origin.
func NewOrigin() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Describe is rawURL fit for a message: user, host, port and database,
// without the password or any other parameter (which may hold one too).
// pgx also takes key=value strings, so those are read by pgx itself.
func Describe(rawURL string) string {
	if cfg, err := pgx.ParseConfig(rawURL); err == nil {
		u := url.URL{Scheme: "postgres", User: url.User(cfg.User), Host: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), Path: "/" + cfg.Database}
		return u.String()
	}
	// not one pgx reads: cut it by hand, keeping the user, host and path
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok || scheme == "" || strings.ContainsAny(scheme, " =") {
		return "(unparsable PostgreSQL URL)"
	}
	rest, _, _ = strings.Cut(rest, "?")
	host, path, _ := strings.Cut(rest, "/")
	if at := strings.LastIndex(host, "@"); at >= 0 {
		user, _, _ := strings.Cut(host[:at], ":")
		host = user + "@" + host[at+1:]
	}
	return scheme + "://" + host + "/" + path
}

// Init is eventstore.Store's: Open has done the work.
func (s *Store) Init() error { return nil }

// Close stops pruning and writing (saves still waiting for a statement
// fail) and closes the connections.
func (s *Store) Close() {
	s.stop()
	s.commits.wait()
	s.pruned.Wait()
	s.pool.Close()
}

// MaxQueryLimit is the most events one query returns.
func (s *Store) MaxQueryLimit() int { return s.opts.MaxLimit }

// ReplacesAtomically marks the store as a store.Replacer.
func (s *Store) ReplacesAtomically() {}

// Origin is this process's id in the change log.
func (s *Store) Origin() string { return s.opts.Origin }

// String names the database, for logs.
func (s *Store) String() string { return s.where }

// pruneLoop deletes old change-log entries now and then. Every instance
// does it; the deletion is idempotent.
func (s *Store) pruneLoop(ctx context.Context) {
	defer s.pruned.Done()
	every := min(s.opts.LogRetention/10, time.Hour)
	t := time.NewTicker(max(every, time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.Prune(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("pruning the change log", "err", err)
			}
		}
	}
}

// tx runs fn in a transaction, committing when it returns nil.
func (s *Store) tx(ctx context.Context, fn func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, fn)
}
