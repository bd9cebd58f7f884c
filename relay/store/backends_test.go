package store_test

import (
	"context"
	"os"
	"testing"

	"github.com/fiatjaf/eventstore"
	"github.com/snowclaw/snowclaw/internal/pgtest"
	"github.com/snowclaw/snowclaw/relay/store"
	"github.com/snowclaw/snowclaw/relay/store/postgres"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// backends are the stores the paging tests run over: each must answer
// every filter exactly and page through a burst second.
func backends() map[string]func(t testing.TB) eventstore.Store {
	return map[string]func(t testing.TB) eventstore.Store{
		"badger":   func(t testing.TB) eventstore.Store { return openStore(t) },
		"postgres": func(t testing.TB) eventstore.Store { return openPG(t) },
	}
}

// openPG is a PostgreSQL store on a fresh database of the test cluster.
func openPG(t testing.TB) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), pgtest.New(t), postgres.Options{MaxLimit: store.PageSize})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}
