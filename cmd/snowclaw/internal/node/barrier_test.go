package node_test

import (
	"testing"

	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/internal/wsclient"
)

// waitEvent waits until subscription sub of c has received event id. It
// is the barrier before asserting that an earlier event was NOT
// delivered: the relay writes to one connection in order, so once a
// sentinel published later has arrived, anything broadcast before it has
// arrived too (no sleep that hopes the relay was fast enough).
func waitEvent(t testing.TB, c *wsclient.Client, sub, id string) {
	t.Helper()
	testwait.For(t, "event "+id[:8]+" on subscription "+sub, func() bool { return c.EventIDs(sub)[id] })
}
