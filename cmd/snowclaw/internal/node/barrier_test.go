package node_test

import (
	"testing"
	"time"

	"github.com/snowclaw/snowclaw/internal/wsclient"
)

// waitEvent waits until subscription sub of c has received event id. It
// is the barrier before asserting that an earlier event was NOT
// delivered: the relay writes to one connection in order, so once a
// sentinel published later has arrived, anything broadcast before it has
// arrived too (no sleep that hopes the relay was fast enough).
func waitEvent(t testing.TB, c *wsclient.Client, sub, id string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !c.EventIDs(sub)[id] {
		if time.Now().After(deadline) {
			t.Fatalf("event %s never reached subscription %q", id[:8], sub)
		}
		// the client's receive buffer fills from its own goroutine
		time.Sleep(5 * time.Millisecond)
	}
}
