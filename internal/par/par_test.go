package par

import (
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
)

// Every index is visited exactly once, for sizes below, at and above the
// point where the loop goes parallel.
func TestFor_VisitsEachOnce(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 65, 1000, 4097} {
		seen := make([]atomic.Int32, n)
		For(n, func(i int) { seen[i].Add(1) })
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Fatalf("n=%d: index %d visited %d times", n, i, c)
			}
		}
	}
}

// A worker's panic reaches the caller's goroutine, where a recover sees
// it; a range's error is returned.
func TestRanges_PanicAndError(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	got := func() (r any) {
		defer func() { r = recover() }()
		For(1000, func(i int) {
			if i == 999 {
				panic("boom")
			}
		})
		return nil
	}()
	if got != "boom" {
		t.Fatalf("recovered %v, want the worker's panic", got)
	}
	bad := errors.New("bad range")
	err := Ranges(1000, func(lo, hi int) error {
		if lo == 0 {
			return bad
		}
		return nil
	})
	if !errors.Is(err, bad) {
		t.Fatalf("err = %v, want the range's error", err)
	}
}
