package clock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/relay/clock"
)

// stepClock is a local clock that moves by step at every reading, so a
// store reading between two of its readings has a known round trip.
type stepClock struct {
	t    time.Time
	step time.Duration
}

func (s *stepClock) now() time.Time { s.t = s.t.Add(s.step); return s.t }

// storeAt answers the store's time as at minus skew of the local clock's
// last reading: a store whose clock is skew behind this instance's.
type storeAt struct {
	local *stepClock
	skew  time.Duration
	err   error
}

func (s *storeAt) StoreTime(context.Context) (time.Time, error) {
	return s.local.t.Add(-s.skew), s.err
}

func TestClock_CorrectsSkew(t *testing.T) {
	for _, skew := range []time.Duration{5 * time.Minute, -5 * time.Minute, 40 * time.Second, -40 * time.Second, 0} {
		local := &stepClock{t: time.Unix(1_800_000_000, 0), step: 2 * time.Millisecond}
		c := clock.New(local.now, &storeAt{local: local, skew: skew}, time.Second, nil)
		if err := c.Check(); err == nil {
			t.Fatalf("skew %s: Check passed before any reading of the store", skew)
		}
		if err := c.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		off, e, ok := c.Offset()
		if !ok || (off - -skew).Abs() > e || e > 2*time.Millisecond {
			t.Fatalf("skew %s: offset %s ± %s (synced %v), want %s", skew, off, e, ok, -skew)
		}
		want := local.t.Add(local.step).Add(-skew)
		if got := c.Now(); (got.Sub(want)).Abs() > 2*time.Millisecond {
			t.Fatalf("skew %s: Now %s, the store's time %s", skew, got, want)
		}
		if err := c.Check(); err != nil {
			t.Fatalf("skew %s: %v", skew, err)
		}
	}
}

func TestClock_RefusesWhenUnsure(t *testing.T) {
	// a round trip of 3 s: the offset is known to ±1.5 s, over the bound
	local := &stepClock{t: time.Unix(1_800_000_000, 0), step: 3 * time.Second}
	c := clock.New(local.now, &storeAt{local: local}, time.Second, nil)
	if err := c.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	err := c.Check()
	if err == nil || !snowclaw.Retryable(snowclaw.Text(err)) {
		t.Fatalf("Check with a 3 s round trip: %v, want a retryable refusal", err)
	}
}

func TestClock_KeepsTheEstimateWhenTheStoreFails(t *testing.T) {
	local := &stepClock{t: time.Unix(1_800_000_000, 0), step: time.Millisecond}
	src := &storeAt{local: local, skew: time.Minute}
	c := clock.New(local.now, src, time.Second, nil)
	if err := c.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	before, _, _ := c.Offset()
	src.err, src.skew = errors.New("connection refused"), 0
	if err := c.Sync(context.Background()); err == nil {
		t.Fatal("Sync with the store down reported no error")
	}
	if off, _, ok := c.Offset(); off != before || !ok {
		t.Fatalf("a failed reading moved the offset: %s → %s (synced %v)", before, off, ok)
	}
}

func TestClock_AloneIsLocal(t *testing.T) {
	local := &stepClock{t: time.Unix(1_800_000_000, 0), step: time.Second}
	c := clock.New(local.now, nil, time.Second, nil)
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	if got := c.Now(); !got.Equal(local.t) {
		t.Fatalf("Now %s, local %s", got, local.t)
	}
}
