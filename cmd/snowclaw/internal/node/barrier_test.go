package node_test

import (
	"time"
)

// waitEvent waits until subscription sub of rc has received event id. It
// is the barrier before asserting that an earlier event was NOT
// delivered: the relay writes to one connection in order, so once a
// sentinel published later has arrived, anything broadcast before it has
// arrived too (no sleep that hopes the relay was fast enough).
func (rc *rawConn) waitEvent(sub, id string) {
	rc.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !rc.eventIDs(sub)[id] {
		if time.Now().After(deadline) {
			rc.t.Fatalf("event %s never reached subscription %q", id[:8], sub)
		}
		// the client's receive buffer fills from its own goroutine
		time.Sleep(5 * time.Millisecond)
	}
}
