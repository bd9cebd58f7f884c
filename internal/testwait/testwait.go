// Package testwait is the tests' one way to wait for something to happen
// that no event announces: a condition polled until it holds, with a
// bound that is a failure, not a pause. A test that can wait on a channel,
// a barrier or a relay's EOSE does that instead; a fixed sleep is never a
// way to wait.
//
// Every bound the tests set is on one scale, ScaleEnv: a slow or busy
// machine (a shared CI runner, a laptop on battery) raises it instead of
// editing deadlines scattered through the suite. The bounds only decide
// how long a failing test hangs, so raising them never weakens a test.
package testwait

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// ScaleEnv names the variable that multiplies every bound: 3 gives each
// wait three times as long. Unset, it is 1.
const ScaleEnv = "SNOWCLAW_TEST_TIMEOUT_SCALE"

// scale is ScaleEnv, read once; a value that is not a positive number
// stops the tests with a message, rather than silently meaning 1.
var scale = sync.OnceValue(func() float64 {
	v := os.Getenv(ScaleEnv)
	if v == "" {
		return 1
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 || f > 1000 {
		panic(fmt.Sprintf("%s=%q: want a positive number, such as 2 or 0.5", ScaleEnv, v))
	}
	return f
})

// Scaled is d on this machine's scale (ScaleEnv): the bound to give any
// wait, a websocket answer or a select's timeout alike.
func Scaled(d time.Duration) time.Duration { return time.Duration(float64(d) * scale()) }

// DefaultTimeout bounds For, before scaling. It is far above what any
// wait takes on an idle machine: it only decides how long a failing test
// hangs.
const DefaultTimeout = 10 * time.Second

// Until polls cond, first every millisecond then backing off to every
// 20 ms, until it holds, and reports whether it did within timeout
// (Scaled). cond runs on the caller's goroutine, so it may call t.Fatal.
func Until(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(Scaled(timeout))
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
		t.Fatalf("timed out after %s waiting for %s", Scaled(timeout), what)
	}
}

// Context is a context that ends after timeout (Scaled), or when t ends:
// the deadline of a client that retries (wsclient's *Again methods).
func Context(t testing.TB, timeout time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Scaled(timeout))
	t.Cleanup(cancel)
	return ctx
}
