package testwait

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestUntil: a condition that comes true is seen soon after, and one that
// never does is given up on at the bound, not before (synctest's clock).
func TestUntil(t *testing.T) {
	withScale(t, 1)
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		ready := start.Add(300 * time.Millisecond)
		if !Until(time.Second, func() bool { return !time.Now().Before(ready) }) {
			t.Fatal("a condition true after 300 ms was not seen within 1 s")
		}
		if late := time.Since(start) - 300*time.Millisecond; late > 20*time.Millisecond {
			t.Errorf("seen %s after it held, want at most one poll (20 ms)", late)
		}
		start = time.Now()
		if Until(time.Second, func() bool { return false }) {
			t.Fatal("a false condition held")
		}
		if took := time.Since(start); took < time.Second || took > time.Second+20*time.Millisecond {
			t.Errorf("gave up after %s, want the bound, 1 s", took)
		}
	})
}

// fakeT records a failure instead of ending the test.
type fakeT struct {
	testing.TB
	failed string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = format
}

// TestWithin: a wait that times out fails the test; one that is met does
// not.
func TestWithin(t *testing.T) {
	withScale(t, 1)
	synctest.Test(t, func(t *testing.T) {
		var f fakeT
		Within(&f, time.Second, "nothing", func() bool { return false })
		if f.failed == "" {
			t.Error("a wait that timed out did not fail")
		}
		f = fakeT{}
		n := 0
		For(&f, "the third poll", func() bool { n++; return n == 3 })
		if f.failed != "" || n != 3 {
			t.Errorf("a met wait: failed %q after %d polls", f.failed, n)
		}
	})
}

// withScale sets the scale for t, as ScaleEnv would.
func withScale(t *testing.T, f float64) {
	old := scale
	scale = func() float64 { return f }
	t.Cleanup(func() { scale = old })
}

// TestScaled: a slow machine's scale stretches every bound, Until's too.
func TestScaled(t *testing.T) {
	withScale(t, 3)
	if got := Scaled(2 * time.Second); got != 6*time.Second {
		t.Fatalf("Scaled(2s) at scale 3 = %s, want 6s", got)
	}
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if Until(time.Second, func() bool { return false }) {
			t.Fatal("a false condition held")
		}
		if took := time.Since(start); took < 3*time.Second || took > 3*time.Second+20*time.Millisecond {
			t.Errorf("gave up after %s, want the scaled bound, 3 s", took)
		}
	})
}
