package relay

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/relay/store"
)

// expiry deletes events whose NIP-40 expiration has passed. Reads already
// hide them (snowclaw.Event.Expired); this frees their space and takes
// them out of the index and the agent's memory, through Delete. Every stored event
// with an expiration is tracked as it is saved, the stored ones are read
// once at the first sweep, and a sweep runs every interval: a heap of due
// times, so a sweep costs what has expired, not what is stored.
type expiry struct {
	mu       sync.Mutex
	due      expiringHeap               // may hold entries forgotten since
	live     map[string]nostr.Timestamp // what is still tracked, by id
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

func newExpiry() *expiry {
	return &expiry{live: make(map[string]nostr.Timestamp), interval: time.Hour}
}

// track notes a stored event's expiration, if it has one.
func (x *expiry) track(evt *snowclaw.Event) {
	if !evt.Expires {
		return
	}
	at := evt.Expiration
	x.mu.Lock()
	defer x.mu.Unlock()
	if _, ok := x.live[evt.ID]; ok {
		return // the first sweep's scan meets events tracked on save
	}
	x.live[evt.ID] = at
	heap.Push(&x.due, expiring{id: evt.ID, at: at})
}

// forget drops a deleted event. It runs on every Delete, so it only
// unmarks the event (O(1)); its heap entry is skipped when it comes due
// rather than searched for.
func (x *expiry) forget(id string) {
	x.mu.Lock()
	delete(x.live, id)
	x.mu.Unlock()
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
			x.sweep(ctx, r, r.now())
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
			x.track(snowclaw.ReadEvent(evt))
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
		e := heap.Pop(&x.due).(expiring)
		if at, ok := x.live[e.id]; ok && at == e.at {
			delete(x.live, e.id)
			ids = append(ids, e.id)
		}
	}
	return ids
}

// SweepExpired runs one sweep now, as the loop does every interval: what
// expired by the relay's clock (Options.Clock, over a shared store the
// store's) is deleted.
func (r *Relay) SweepExpired(ctx context.Context) { r.expiry.sweep(ctx, r, r.now()) }
