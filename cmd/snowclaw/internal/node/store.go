package node

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/snowclaw/snowclaw/relay/store"
	"github.com/snowclaw/snowclaw/relay/store/postgres"
)

// The event store backends.
const (
	BackendBadger   = "badger"   // <data>/events, one process
	BackendPostgres = "postgres" // shared by several instances
)

// StoreOptions choose the event store.
type StoreOptions struct {
	Backend     string // BackendBadger (also when empty) or BackendPostgres
	PostgresURL string
	// Badger is the badger store's tuning.
	Badger store.BadgerOptions
	// Origin is this process's id in a shared store's change log;
	// random when empty.
	Origin string
}

// OpenStore opens the chosen event store, wrapped so that every reader
// and writer gets exact answers: serve, reindex and migrate open it the
// same way. maxLimit only needs to cover the largest page anyone asks
// for.
func OpenStore(ctx context.Context, o StoreOptions, dataDir string, maxLimit int, logger *slog.Logger) (*store.Exact, error) {
	switch o.Backend {
	case "", BackendBadger:
		return store.OpenBadger(filepath.Join(dataDir, "events"), maxLimit, o.Badger)
	case BackendPostgres:
		pg, err := postgres.Open(ctx, o.PostgresURL, postgres.Options{
			Origin: o.Origin, MaxLimit: max(maxLimit, store.PageSize), Logger: logger,
		})
		if err != nil {
			return nil, err
		}
		return store.NewExact(pg), nil
	}
	return nil, fmt.Errorf("store backend %q: use %q or %q", o.Backend, BackendBadger, BackendPostgres)
}
