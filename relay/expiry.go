package relay

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/relay/store"
)

// expiry deletes events whose NIP-40 expiration has passed. Reads already
// hide them (policies.Expired); this frees their space and takes them out
// of the index and the agent's memory, through Delete. It is the sweep
// khatru ran: every stored event with an expiration is tracked as it is
// saved, the stored ones are read once at the first sweep, and a sweep
// runs every interval.
type expiry struct {
	mu       sync.Mutex
	due      expiringHeap
	scanned  bool
	interval time.Duration
}

type expiring struct {
	id string
	at nostr.Timestamp
}

type expiringHeap []expiring

func (h expiringHeap) Len() int           { return len(h) }
func (h expiringHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h expiringHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiringHeap) Push(x any)        { *h = append(*h, x.(expiring)) }
func (h *expiringHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func newExpiry() *expiry { return &expiry{interval: time.Hour} }

// track notes a stored event's expiration, if it has one.
func (x *expiry) track(evt *nostr.Event) {
	at, ok := policies.Expiration(evt)
	if !ok {
		return
	}
	x.mu.Lock()
	heap.Push(&x.due, expiring{id: evt.ID, at: at})
	x.mu.Unlock()
}

// forget drops a deleted event.
func (x *expiry) forget(id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for i := range x.due {
		if x.due[i].id == id {
			heap.Remove(&x.due, i)
			return
		}
	}
}

// run sweeps every interval until ctx ends.
func (x *expiry) run(ctx context.Context, r *Relay) {
	t := time.NewTicker(x.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			x.sweep(ctx, r, nostr.Now())
		}
	}
}

// sweep deletes what expired by now; the first sweep reads the store for
// the events stored before this process started.
func (x *expiry) sweep(ctx context.Context, r *Relay, now nostr.Timestamp) {
	x.mu.Lock()
	scan := !x.scanned
	x.scanned = true
	x.mu.Unlock()
	if scan {
		err := store.Each(ctx, r.store, nostr.Filter{}, func(evt *nostr.Event) bool {
			x.track(evt)
			return true
		})
		if err != nil {
			r.log.Warn("expiry: reading stored events", "err", err)
		}
	}
	for _, id := range x.expired(now) {
		ch, err := r.store.QueryEvents(ctx, nostr.Filter{IDs: []string{id}, Limit: 1})
		if err != nil {
			continue
		}
		for evt := range ch {
			if err := r.Delete(ctx, evt); err != nil {
				r.log.Warn("expiry: deleting", "id", id, "err", err)
			}
		}
	}
}

func (x *expiry) expired(now nostr.Timestamp) []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	var ids []string
	for x.due.Len() > 0 && x.due[0].at <= now {
		ids = append(ids, heap.Pop(&x.due).(expiring).id)
	}
	return ids
}
