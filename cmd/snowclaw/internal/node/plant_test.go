package node_test

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
)

// plant stops the relay and writes evs straight into its store (badger
// or PostgreSQL, whichever the test runs over), past every write rule:
// events that older versions accepted, or that an attacker with a copy
// of the data directory put there. The caller starts the relay again
// (after changing options, if it needs to).
func (e *testEnv) plant(evs []nostr.Event) {
	e.t.Helper()
	e.stop()
	st, err := node.OpenStore(context.Background(), storeOptions(e.opts), e.dir, 0, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	defer st.Close()
	for i := range evs {
		if err := st.SaveEvent(context.Background(), &evs[i]); err != nil {
			e.t.Fatal(err)
		}
	}
}
