package memsearch

import (
	"context"
	"sync"

	"github.com/snowclaw/snowclaw/search"
)

// queue batches index updates. Indexing one event at a time costs a bleve
// disk sync each (about 340 a second); the write path only enqueues, a
// worker applies whatever has piled up as one batch, and every search
// first applies what is pending, so a reader still sees every event whose
// OK went out before its REQ.
type queue struct {
	mu      sync.Mutex
	ops     []op
	kick    chan struct{}
	applyMu sync.Mutex // one batch at a time, in order
	done    chan struct{}
}

// op is one index update: remove ids, then index doc (if any).
type op struct {
	remove []string
	doc    *search.Doc
}

func newQueue() *queue {
	return &queue{kick: make(chan struct{}, 1), done: make(chan struct{})}
}

func (q *queue) push(o op) {
	q.mu.Lock()
	q.ops = append(q.ops, o)
	q.mu.Unlock()
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

// run applies batches until stop is closed, then applies what is left.
func (p *Plugin) runQueue(stop <-chan struct{}) {
	defer close(p.q.done)
	for {
		select {
		case <-p.q.kick:
			p.flush(context.Background())
		case <-stop:
			p.flush(context.Background())
			return
		}
	}
}

// flush applies every pending update, in order: runs of additions go to
// the index as one batch.
func (p *Plugin) flush(ctx context.Context) {
	p.q.applyMu.Lock()
	defer p.q.applyMu.Unlock()
	p.q.mu.Lock()
	ops := p.q.ops
	p.q.ops = nil
	p.q.mu.Unlock()
	var batch []search.Doc
	apply := func() {
		if len(batch) > 0 {
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
