package node_test

import (
	"os"
	"testing"

	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/pgtest"
)

// The end-to-end tests run over the store SNOWCLAW_TEST_STORE names:
// badger (the default) or postgres, a fresh database of a cluster the
// tests start themselves (CI runs both). testPostgresURL is the node's
// PostgresURL: "" for badger.
func testPostgresURL(t *testing.T) string {
	switch b := os.Getenv("SNOWCLAW_TEST_STORE"); b {
	case "", node.BackendBadger:
		return ""
	case node.BackendPostgres:
		return pgtest.New(t)
	default:
		t.Fatalf("SNOWCLAW_TEST_STORE=%q: want badger or postgres", b)
		return ""
	}
}

// storeOptions is the store a test node runs over, for opening it
// directly (plant).
func storeOptions(o node.Options) node.StoreOptions {
	if o.PostgresURL != "" {
		return node.StoreOptions{Backend: node.BackendPostgres, PostgresURL: o.PostgresURL}
	}
	return node.StoreOptions{Backend: node.BackendBadger}
}

// overPostgres reports whether the tests run over PostgreSQL, whose
// store is shared: a node over it follows the change log.
func overPostgres() bool { return os.Getenv("SNOWCLAW_TEST_STORE") == node.BackendPostgres }

// badgerOnly skips a test of badger's own files when the tests run over
// PostgreSQL.
func badgerOnly(t *testing.T) {
	if overPostgres() {
		t.Skip("tests badger's files; SNOWCLAW_TEST_STORE=postgres")
	}
}
