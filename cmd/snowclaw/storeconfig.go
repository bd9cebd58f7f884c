package main

import (
	"time"

	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/relay/store"
	"github.com/snowclaw/snowclaw/relay/store/postgres"
)

// validate checks the store's choice: a known backend, and for
// PostgreSQL a URL pgx can read (named without its password). With
// badger, a disk reserve other than 0 (off) must hold what badger
// writes at once on its own, or a disk filled up to the reserve still
// ends the relay with SIGBUS (store.BadgerMinFree).
func (s StoreConfig) validate(bad func(key, format string, args ...any)) {
	if least := store.BadgerMinFree.MB(); s.Backend == node.BackendBadger && s.MinFreeMB > 0 && s.MinFreeMB < least {
		bad("store.min_free_mb", "must be at least %d, got %d (%v); 0 turns the guard off", least, s.MinFreeMB, store.BadgerMinFree)
	}
	if d := s.MaxClockError.Duration; d < 10*time.Millisecond || d > time.Minute {
		bad("store.max_clock_error", "must be between 10ms and 1m, got %v", d)
	}
	if s.CacheMB < 0 || s.CacheMB > 1<<20 {
		bad("store.cache_mb", "must be between 0 (off) and 1048576 MiB, got %d", s.CacheMB)
	}
	switch s.Backend {
	case node.BackendBadger:
		if s.PostgresURL != "" {
			bad("store.postgres_url", "is set but store.backend is %q; set store.backend = \"postgres\" to use it (or --store-url)", s.Backend)
		}
	case node.BackendPostgres:
		if s.PostgresURL == "" {
			bad("store.postgres_url", "store.backend = \"postgres\" needs a URL: postgres://user:password@host:5432/database (SNOWCLAW_STORE_POSTGRES_URL or --store-url)")
		} else if err := postgres.CheckURL(s.PostgresURL); err != nil {
			bad("store.postgres_url", "%v", err)
		}
	default:
		bad("store.backend", "%q is not a store; use \"badger\" (default) or \"postgres\"", s.Backend)
	}
}

// storeOptions are the store's options from the config (reindex,
// migrate: node.OpenStore).
func storeOptions(c Config) node.StoreOptions {
	return node.StoreOptions{Backend: c.Store.Backend, PostgresURL: c.Store.PostgresURL, Badger: badgerOptions(c)}
}

// badgerOptions are the badger store's settings: store.cache_mb 0 is
// off in the config, where store.BadgerOptions takes 0 for its default.
func badgerOptions(c Config) store.BadgerOptions {
	if c.Store.CacheMB == 0 {
		return store.BadgerOptions{CacheMB: -1}
	}
	return store.BadgerOptions{CacheMB: c.Store.CacheMB}
}

// postgresURL is the node's shared store, "" for badger.
func postgresURL(c Config) string {
	if c.Store.Backend != node.BackendPostgres {
		return ""
	}
	return c.Store.PostgresURL
}
