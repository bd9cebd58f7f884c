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

// TestDiskGuardCountsWhatItLetThrough: a flood within one interval does
// not outrun the measurements. Every write let through counts as the
// most an event can take on disk, and once those could have used the
// room above the reserve the next write measures again: the first write
// past the reserve is refused, not the first after the interval.
func TestDiskGuardCountsWhatItLetThrough(t *testing.T) {
	const perWrite = 1 << 20
	free, probes := uint64(300<<20), 0
	g := &diskGuard{dir: "/data", interval: time.Hour, log: slog.New(slog.DiscardHandler), perWrite: perWrite,
		probe: func(string) (uint64, error) { probes++; return free, nil }}
	g.setReserve(256)
	accepted := 0
	for range 100 {
		if g.check() != nil {
			break
		}
		accepted++
		free -= perWrite // what the write took
	}
	// the last write let through is the one that found 256 MiB free
	if accepted != 45 || free != 255<<20 {
		t.Fatalf("%d writes accepted, %d MiB left: want 45, down to one write past the 256 MiB reserve and no further", accepted, free>>20)
	}
	if probes < 2 || probes > 46 {
		t.Fatalf("%d measurements", probes)
	}
}

// TestDiskGuardFloorAndReadOnly: the reserve is never below what the
// store writes at once on its own, and a store opened read-only refuses
// every write, saying why, whatever the space.
func TestDiskGuardFloorAndReadOnly(t *testing.T) {
	free := uint64(100 << 20)
	g := &diskGuard{dir: "/data", interval: time.Hour, log: slog.New(slog.DiscardHandler), floor: 202 << 20,
		probe: func(string) (uint64, error) { return free, nil }}
	g.setReserve(16)
	if err := g.check(); !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), "reserve of 202 MiB") || g.status().ReserveBytes != 202<<20 {
		t.Fatalf("reserve 16 under a floor of 202 with 100 MiB free: %v, %+v", err, g.status())
	}
	g.setReserve(0)
	if err := g.check(); err != nil {
		t.Fatalf("reserve 0 is off, floor or not: %v", err)
	}

	g = &diskGuard{dir: "/data", interval: time.Hour, log: slog.New(slog.DiscardHandler), readOnly: true,
		probe: func(string) (uint64, error) { return free, nil }}
	g.setReserve(256)
	free = 1 << 40
	err := g.check()
	if !errors.Is(err, ErrDiskFull) || !strings.HasPrefix(err.Error(), "error: disk full: the relay started with") || !g.isFull() || !g.status().ReadOnly {
		t.Fatalf("a read-only store with a terabyte free: %v, full %v, %+v", err, g.isFull(), g.status())
	}
}
