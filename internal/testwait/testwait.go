// Package testwait is the tests' one way to wait for something to happen
// that no event announces: a condition polled until it holds, with a
// bound that is a failure, not a pause. A test that can wait on a channel,
// a barrier or a relay's EOSE does that instead; a fixed sleep is never a
// way to wait.
package testwait

import (
	"testing"
	"time"
)

// DefaultTimeout bounds For. It is far above what any wait takes on an
// idle machine: it only decides how long a failing test hangs.
const DefaultTimeout = 10 * time.Second

// Until polls cond, first every millisecond then backing off to every
// 20 ms, until it holds, and reports whether it did within timeout. cond
// runs on the caller's goroutine, so it may call t.Fatal.
func Until(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for pause := time.Millisecond; ; pause = min(2*pause, 20*time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
	}
}

// For fails t unless cond holds within DefaultTimeout; what names what was
// awaited, for the failure.
func For(t testing.TB, what string, cond func() bool) {
	t.Helper()
	Within(t, DefaultTimeout, what, cond)
}

// Within is For with its own bound, for what is known to take longer (a
// process starting, a leader elected over a database).
func Within(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Until(timeout, cond) {
		t.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
}
