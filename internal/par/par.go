// Package par runs the iterations of a loop on every core when there are
// enough of them (a rebuild's or a replay's batches), and inline when
// there are few (a live write's docs), where goroutines would cost more
// than they save.
//
// A panic in a worker is raised again in the caller's goroutine, so the
// caller's own recovery (the search index turns a panic into an error)
// sees it as if the loop had run inline.
package par

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// perWorker is the fewest items worth a goroutine of their own.
const perWorker = 64

// Ranges splits [0, n) into one contiguous range per worker (at most one
// per core and one per 64 items) and calls f(lo, hi) for each; with one
// worker it calls f(0, n) inline. It returns the ranges' errors joined.
func Ranges(n int, f func(lo, hi int) error) error {
	workers := min(runtime.GOMAXPROCS(0), max(1, n/perWorker))
	if workers == 1 {
		return f(0, n)
	}
	errs := make([]error, workers)
	var failed atomic.Value
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*n/workers, (w+1)*n/workers
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					failed.Store(fmt.Sprint(r))
				}
			}()
			errs[w] = f(lo, hi)
		})
	}
	wg.Wait()
	if r := failed.Load(); r != nil {
		panic(r)
	}
	return errors.Join(errs...)
}

// For calls f(i) for every i in [0, n), split as Ranges splits them.
func For(n int, f func(i int)) {
	_ = Ranges(n, func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			f(i)
		}
		return nil
	})
}
