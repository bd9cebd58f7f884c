package memsearch

import (
	"context"
	"log/slog"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/snowclaw/snowclaw/search"
)

// A full queue makes the publisher wait (back-pressure) until the pending
// updates are taken, instead of growing without bound.
func TestQueue_FullQueueBlocksPushUntilDrained(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue()
		for i := range maxPending {
			q.push(op{remove: []string{strconv.Itoa(i)}})
		}
		var pushed atomic.Bool
		go func() {
			q.push(op{remove: []string{"one too many"}})
			pushed.Store(true)
		}()
		synctest.Wait()
		if pushed.Load() {
			t.Fatalf("push returned with %d updates already pending", maxPending)
		}
		if got := len(q.take()); got != maxPending {
			t.Fatalf("took %d updates, want %d", got, maxPending)
		}
		synctest.Wait()
		if !pushed.Load() {
			t.Fatal("push still waiting after the queue was drained")
		}
		if got := len(q.take()); got != 1 {
			t.Fatalf("took %d updates after the drain, want the 1 that waited", got)
		}
	})
}

// While the index loads, updates are held without making writers wait,
// up to maxHeld; past that a writer waits for room as it does afterwards.
func TestQueue_HeldWhileLoadingUpToABound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &Plugin{q: newQueue()}
		p.loading.Store(true)
		for i := range maxHeld + maxPending {
			p.enqueue(op{remove: []string{strconv.Itoa(i)}})
		}
		var pushed atomic.Bool
		go func() {
			p.enqueue(op{remove: []string{"one too many"}})
			pushed.Store(true)
		}()
		synctest.Wait()
		if pushed.Load() {
			t.Fatalf("a write went through with %d updates already queued while loading", maxHeld+maxPending)
		}
		p.loading.Store(false)
		if got := len(p.q.take()); got != maxHeld+maxPending {
			t.Fatalf("took %d updates, want %d", got, maxHeld+maxPending)
		}
		synctest.Wait()
		if !pushed.Load() {
			t.Fatal("the write still waits after the queue was drained")
		}
	})
}

// With no reader forcing it, the worker applies an update batchWait after
// it arrives — not before (updates gather into batches), and not later
// (docs/design.md "Search": searchable within a second of the OK); batchMax updates
// are applied at once.
func TestQueue_WorkerAppliesWithinBatchWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ix, err := search.Open(search.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		p := &Plugin{q: newQueue(), ix: ix, log: slog.New(slog.DiscardHandler)}
		stop := make(chan struct{})
		go p.runQueue(stop)
		defer func() { close(stop); <-p.q.done }()

		doc := func(id string) *search.Doc {
			return &search.Doc{ID: id, Kind: 1, Text: "lighthouse keeper notes " + id}
		}
		p.q.push(op{doc: doc("first")})
		time.Sleep(batchWait - time.Millisecond)
		synctest.Wait()
		if _, ok := ix.Meta("first"); ok {
			t.Fatal("applied before the batch window closed: no batching")
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if _, ok := ix.Meta("first"); !ok {
			t.Fatalf("not applied %s after its update", batchWait)
		}

		began := time.Now()
		for i := range batchMax {
			p.q.push(op{doc: doc("burst" + strconv.Itoa(i))})
		}
		synctest.Wait()
		if _, ok := ix.Meta("burst" + strconv.Itoa(batchMax-1)); !ok || time.Since(began) != 0 {
			t.Fatalf("a full batch waited for the window (applied %v after %s)", ok, time.Since(began))
		}
	})
}

// flush is also what a reader runs: pending updates are applied in order,
// so a removal after an addition of the same id leaves nothing.
func TestQueue_FlushAppliesInOrder(t *testing.T) {
	ix, err := search.Open(search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	p := &Plugin{q: newQueue(), ix: ix, log: slog.New(slog.DiscardHandler)}
	p.q.push(op{doc: &search.Doc{ID: "a", Kind: 1, Text: "first version"}})
	p.q.push(op{remove: []string{"a"}})
	p.q.push(op{doc: &search.Doc{ID: "b", Kind: 1, Text: "kept"}})
	p.flush(context.Background())
	if _, ok := ix.Meta("a"); ok {
		t.Fatal("a was removed after it was added, but is indexed")
	}
	if _, ok := ix.Meta("b"); !ok {
		t.Fatal("b is not indexed after flush")
	}
}

// The index keeps one version per address, the one saved last: a version
// indexed by an earlier batch leaves when a newer one is applied, and of
// versions saved in one batch only the last is indexed at all.
func TestQueue_OneVersionPerAddress(t *testing.T) {
	ix, err := search.Open(search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	p := &Plugin{q: newQueue(), ix: ix, log: slog.New(slog.DiscardHandler)}
	version := func(id, text string) op {
		return op{doc: &search.Doc{ID: id, Kind: 30078, Pubkey: "pk", D: "snow:memory:x", Text: text}}
	}
	p.q.push(version("v1", "first"))
	p.flush(context.Background())
	p.q.push(version("v2", "second"))
	p.q.push(op{doc: &search.Doc{ID: "other", Kind: 30078, Pubkey: "pk", D: "snow:memory:y", Text: "else"}})
	p.q.push(version("v3", "third"))
	p.flush(context.Background())
	if got := ix.Versions("30078:pk:snow:memory:x"); len(got) != 1 || got[0] != "v3" {
		t.Fatalf("versions indexed at the address: %v, want [v3]", got)
	}
	for _, id := range []string{"v1", "v2"} {
		if _, ok := ix.Meta(id); ok {
			t.Fatalf("replaced version %s is indexed", id)
		}
	}
	if _, ok := ix.Meta("other"); !ok {
		t.Fatal("the doc at another address was dropped")
	}
}
