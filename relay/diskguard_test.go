package relay

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestDiskGuardTransitions drives the guard with a probe the test sets:
// measurements are rate-limited, each transition is logged once, and a
// probe that fails leaves writes open (with one warning).
func TestDiskGuardTransitions(t *testing.T) {
	var logs bytes.Buffer
	free, probes := uint64(500<<20), 0
	var probeErr error
	g := &diskGuard{dir: "/data", interval: time.Hour, log: slog.New(slog.NewTextHandler(&logs, nil)),
		probe: func(string) (uint64, error) { probes++; return free, probeErr }}
	g.setReserve(256)
	measureNow := func() { g.next.Store(0) }
	warnings := func() int { return strings.Count(logs.String(), "level=WARN") }

	for i := range 3 {
		if err := g.check(); err != nil {
			t.Fatalf("check %d with 500 MiB free: %v", i, err)
		}
	}
	if probes != 1 {
		t.Fatalf("%d measurements within one interval, want 1", probes)
	}

	free = 100 << 20
	if err := g.check(); err != nil {
		t.Fatal("the guard measured again before its interval was up")
	}
	measureNow()
	for range 3 {
		measureNow()
		err := g.check()
		if !errors.Is(err, ErrDiskFull) || !strings.HasPrefix(err.Error(), "error: disk full: ") || !strings.Contains(err.Error(), "100 MiB") {
			t.Fatalf("check with 100 MiB free under a 256 MiB reserve: %v", err)
		}
	}
	if !g.isFull() || warnings() != 1 {
		t.Fatalf("full: isFull %v, %d warnings (want 1 per transition)\n%s", g.isFull(), warnings(), logs.String())
	}

	free = 300 << 20
	measureNow()
	if err := g.check(); err != nil || g.isFull() || warnings() != 2 {
		t.Fatalf("space back: err %v, isFull %v, %d warnings\n%s", err, g.isFull(), warnings(), logs.String())
	}

	probeErr = errors.New("statfs: no such file")
	for range 3 {
		measureNow()
		if err := g.check(); err != nil {
			t.Fatalf("an unmeasurable disk refused a write: %v", err)
		}
	}
	if warnings() != 3 {
		t.Fatalf("%d warnings after a failing probe, want one more\n%s", warnings(), logs.String())
	}

	g.setReserve(0)
	free, probeErr = 0, nil
	if err := g.check(); err != nil || g.isFull() {
		t.Fatalf("reserve 0 is off, got %v", err)
	}
}
