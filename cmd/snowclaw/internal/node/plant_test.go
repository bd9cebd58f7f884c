package node_test

import (
	"context"
	"path/filepath"

	"github.com/dgraph-io/badger/v4"
	badgerstore "github.com/fiatjaf/eventstore/badger"
	"github.com/nbd-wtf/go-nostr"
)

// plant stops the relay and writes evs straight into its badger store,
// past every write rule: events that older versions accepted, or that an
// attacker with a copy of the data directory put there. The caller starts
// the relay again (after changing options, if it needs to).
func (e *testEnv) plant(evs []nostr.Event) {
	e.t.Helper()
	e.stop()
	store := &badgerstore.BadgerBackend{
		Path:                  filepath.Join(e.dir, "events"),
		BadgerOptionsModifier: func(o badger.Options) badger.Options { return o.WithLogger(nil) },
	}
	if err := store.Init(); err != nil {
		e.t.Fatal(err)
	}
	defer store.Close()
	for i := range evs {
		if err := store.SaveEvent(context.Background(), &evs[i]); err != nil {
			e.t.Fatal(err)
		}
	}
}
