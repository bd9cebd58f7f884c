package memsearch

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/snowclaw/snowclaw/search"
)

// queue takes index updates off the write path. OnEventSaved only
// enqueues; a worker applies what has piled up as one batch, so that under
// load the per-batch costs (the doc log write, the embedder call, the
// parallel analysis) are paid once per hundreds of events instead of once
// per event. Every search first applies what is pending itself, so a
// reader still finds every event whose OK went out before its REQ; with
// no reader the worker applies a batch within batchWait of its first
// update, well inside the second docs/design.md "Search" allows.
//
// The queue is bounded: at maxPending updates push waits for the worker
// (back-pressure on the publishers, whose OKs slow down) instead of
// holding an unbounded backlog in RAM.
type queue struct {
	mu      sync.Mutex
	ops     []op
	kick    chan struct{} // the first update of a batch arrived
	full    chan struct{} // batchMax updates are waiting: apply now
	room    chan struct{} // one token per pending update
	applyMu sync.Mutex    // one batch at a time, in order
	done    chan struct{} // closed when the worker has stopped
	wait    time.Duration
	max     int
	held    int // held updates pending (guarded by mu)
}

// op is one index update: remove ids, then index doc (if any).
type op struct {
	remove []string
	doc    *search.Doc
	held   bool // queued while the index loaded, without a room token
}

const (
	// batchWait is how long the worker lets a batch gather after its
	// first update.
	batchWait = 50 * time.Millisecond
	// batchMax updates are applied at once without waiting longer.
	batchMax = 1000
	// maxPending bounds the backlog (a few KB per doc).
	maxPending = 16 * batchMax
	// maxHeld bounds what is held without back-pressure while the index
	// loads (hold): past it writers wait for room as they do afterwards,
	// so a flood during a long first start holds ~150 MB at most.
	maxHeld = 4 * maxPending
)

func newQueue() *queue {
	return &queue{kick: make(chan struct{}, 1), full: make(chan struct{}, 1), room: make(chan struct{}, maxPending),
		done: make(chan struct{}), wait: batchWait, max: batchMax}
}

// push enqueues o, waiting while maxPending updates are pending. Once the
// worker has stopped (Close) nothing waits: the index is closing anyway.
func (q *queue) push(o op) {
	select {
	case q.room <- struct{}{}:
	case <-q.done:
	}
	q.mu.Lock()
	q.ops = append(q.ops, o)
	n := len(q.ops)
	q.mu.Unlock()
	signal := q.kick
	if n >= q.max {
		signal = q.full
	}
	select {
	case signal <- struct{}{}:
	default:
	}
}

// hold enqueues o without waiting for room, as long as fewer than
// maxHeld are held: while the index loads nothing applies updates, and a
// writer must not wait for the load. It reports false when full.
func (q *queue) hold(o op) bool {
	o.held = true
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.held >= maxHeld {
		return false
	}
	q.held++
	q.ops = append(q.ops, o)
	return true
}

// take removes and returns every pending update, freeing their room.
func (q *queue) take() []op {
	q.mu.Lock()
	ops := q.ops
	q.ops, q.held = nil, 0
	q.mu.Unlock()
	for _, o := range ops {
		if o.held {
			continue
		}
		select {
		case <-q.room:
		default: // pushed after the worker stopped, without a token
		}
	}
	return ops
}

// runQueue applies batches until stop is closed, then applies what is
// left.
func (p *Plugin) runQueue(stop <-chan struct{}) {
	defer close(p.q.done)
	t := time.NewTimer(0)
	<-t.C
	for {
		select {
		case <-p.q.kick:
			t.Reset(p.q.wait)
			select {
			case <-t.C:
			case <-p.q.full:
				t.Stop()
			case <-stop:
				t.Stop()
				p.flush(context.Background())
				return
			}
		case <-p.q.full:
		case <-stop:
			p.flush(context.Background())
			return
		}
		p.flush(context.Background())
	}
}

// flush applies every pending update, in order: runs of additions go to
// the index as one batch.
func (p *Plugin) flush(ctx context.Context) {
	p.q.applyMu.Lock()
	defer p.q.applyMu.Unlock()
	pos := p.position() // the updates up to it are queued (cursor.go)
	defer p.notePosition(pos, false)
	p.applyOps(ctx, p.q.take())
}

// applyOps applies ops in order; the caller holds q.applyMu. An event
// already indexed is not indexed again: an update held while the index
// loaded may be for an event the load's walk of the store found, and a
// shared store's change log may bring one twice (cursor.go).
func (p *Plugin) applyOps(ctx context.Context, ops []op) {
	var batch []search.Doc
	apply := func() {
		if len(batch) > 0 {
			var err error
			if batch, err = p.replaceVersions(ctx, batch); err != nil {
				p.log.Error("removing replaced versions from the index", "err", err)
				p.rebuildIfBroken(err)
			}
			batch = slices.DeleteFunc(batch, func(d search.Doc) bool {
				_, volatile, have := p.ix.Scope(d.ID)
				return have && !volatile
			})
			if err := p.ix.Index(ctx, batch...); err != nil {
				p.log.Error("indexing events", "docs", len(batch), "err", err)
				p.rebuildIfBroken(err)
			}
			batch = batch[:0]
		}
	}
	for _, o := range ops {
		if len(o.remove) > 0 {
			apply()
			p.noteGone(o.remove)
			if err := p.ix.Remove(ctx, o.remove...); err != nil {
				p.log.Error("removing from the index", "ids", o.remove, "err", err)
				p.rebuildIfBroken(err)
			}
		}
		if o.doc != nil {
			batch = append(batch, *o.doc)
		}
	}
	apply()
}

// noteGone tells a walk behind the index (load.go) of ids the relay
// dropped; the caller holds q.applyMu.
func (p *Plugin) noteGone(ids []string) {
	if p.gone != nil {
		for _, id := range ids {
			p.gone[id] = true
		}
	}
}

// replaceVersions removes from the index the versions the batch's
// addressable docs replace, and returns the batch without the versions
// replaced within it: the store keeps one version per address, the one
// saved last (its replace guard takes only newer ones), and so does the
// index.
func (p *Plugin) replaceVersions(ctx context.Context, batch []search.Doc) ([]search.Doc, error) {
	last := make(map[string]string)
	for _, d := range batch {
		if a := d.Address(); a != "" {
			last[a] = d.ID
		}
	}
	if len(last) == 0 {
		return batch, nil
	}
	kept := batch[:0]
	for _, d := range batch {
		if a := d.Address(); a == "" || last[a] == d.ID {
			kept = append(kept, d)
		}
	}
	var stale []string
	for addr, id := range last {
		for _, v := range p.ix.Versions(addr) {
			if v != id {
				stale = append(stale, v)
			}
		}
	}
	if len(stale) == 0 {
		return kept, nil
	}
	p.noteGone(stale)
	return kept, p.ix.Remove(ctx, stale...)
}
