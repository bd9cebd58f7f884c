package search

import (
	"fmt"
	"runtime/debug"
	"sync/atomic"
)

// A panic inside the engine (ours or a dependency's: the analyzer, a
// damaged doc) must never take the relay down. Every entry point that
// touches index structures recovers, turns the panic into a *PanicError
// (which is ErrNeedsRebuild) and, when the panic hit a write half-way,
// marks the index broken: searches then fail fast with ErrNeedsRebuild
// until Rebuild swaps in a fresh state.

// PanicError is a panic recovered inside the index.
type PanicError struct {
	Op    string // search, index, remove, rebuild, prepare, conflicts
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("search: panic in %s: %v", e.Op, e.Value)
}

// Unwrap makes every recovered panic ask for a rebuild: the structures it
// ran over can no longer be trusted.
func (e *PanicError) Unwrap() error { return ErrNeedsRebuild }

// ErrBroken is returned while an index whose write panicked waits for its
// rebuild.
var ErrBroken = fmt.Errorf("%w: a write failed half-way", ErrNeedsRebuild)

// recoverAs turns a panic into a *PanicError in *err. Use it deferred.
func recoverAs(err *error, op string) {
	if r := recover(); r != nil {
		*err = &PanicError{Op: op, Value: r, Stack: debug.Stack()}
	}
}

// recoverWrite is recoverAs for writes, which also marks the index broken.
func (ix *Index) recoverWrite(err *error, op string) {
	if r := recover(); r != nil {
		*err = &PanicError{Op: op, Value: r, Stack: debug.Stack()}
		ix.broken.Store(true)
	}
}

// IsBroken reports whether a write panicked and the index waits for a
// Rebuild.
func (ix *Index) IsBroken() bool { return ix.broken.Load() }

// faultHook, when set, runs inside the recovery at the start of every
// Search (op "search", the query text) and for every doc a write applies
// under the lock (op "index", the doc text) (SetFaultHook).
var faultHook atomic.Pointer[func(op, text string)]

// SetFaultHook installs f (nil removes it). It exists so tests can inject a
// panic deep in a search or half-way through a write and prove the process
// survives it; production code never sets it.
func SetFaultHook(f func(op, text string)) {
	if f == nil {
		faultHook.Store(nil)
		return
	}
	faultHook.Store(&f)
}

func fault(op, text string) {
	if f := faultHook.Load(); f != nil {
		(*f)(op, text)
	}
}
