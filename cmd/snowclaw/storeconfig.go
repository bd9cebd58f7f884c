package main

import (
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/relay/store/postgres"
)

// validate checks the store's choice: a known backend, and for
// PostgreSQL a URL pgx can read (named without its password).
func (s StoreConfig) validate(bad func(key, format string, args ...any)) {
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
	return node.StoreOptions{Backend: c.Store.Backend, PostgresURL: c.Store.PostgresURL}
}

// postgresURL is the node's shared store, "" for badger.
func postgresURL(c Config) string {
	if c.Store.Backend != node.BackendPostgres {
		return ""
	}
	return c.Store.PostgresURL
}
