package node_test

import (
	"os"
	"testing"

	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/pgtest"
)

// The end-to-end tests run over the store SNOWCLAW_TEST_STORE names:
// badger (the default) or postgres, a fresh database of a cluster the
// tests start themselves (CI runs both).
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func testStore(t *testing.T) node.StoreOptions {
	switch b := os.Getenv("SNOWCLAW_TEST_STORE"); b {
	case "", node.BackendBadger:
		return node.StoreOptions{}
	case node.BackendPostgres:
		return node.StoreOptions{Backend: b, PostgresURL: pgtest.New(t)}
	default:
		t.Fatalf("SNOWCLAW_TEST_STORE=%q: want badger or postgres", b)
		return node.StoreOptions{}
	}
}

// badgerOnly skips a test of badger's own files when the tests run over
// PostgreSQL.
func badgerOnly(t *testing.T) {
	if os.Getenv("SNOWCLAW_TEST_STORE") == node.BackendPostgres {
		t.Skip("tests badger's files; SNOWCLAW_TEST_STORE=postgres")
	}
}
