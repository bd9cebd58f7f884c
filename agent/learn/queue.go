package learn

import (
	"sync"
	"time"

	"github.com/snowclaw/snowclaw/agent/memory"
)

// batch is the messages of one conversation waiting to be read.
type batch struct {
	key    string // convKey(group, person)
	group  string // "" in private
	person string // the private conversation's person
	msgs   []memory.HistoryMessage
	timer  *time.Timer
}

// queue debounces conversations: a conversation's batch is ready
// once it has been quiet for Debounce or holds BatchSize messages. The
// learn loop takes ready batches one at a time.
type queue struct {
	mu      sync.Mutex
	waiting map[string]*batch // still collecting
	ready   []*batch          // oldest first
	pending int               // messages queued or being read (Idle)
	signal  chan struct{}
	closed  bool

	current *batch          // being read by the learn loop
	revoked map[string]bool // event ids of current's messages deleted meanwhile
}

func newQueue() *queue {
	return &queue{waiting: map[string]*batch{}, signal: make(chan struct{}, 1)}
}

// convKey names a conversation in learning's bookkeeping: its group, or
// the person of a private one.
func convKey(group, person string) string {
	if group != "" {
		return group
	}
	return "dm:" + person
}

// maxReady bounds the messages waiting for the model: when the model is
// slower than the conversation, the oldest batches are dropped rather
// than RAM growing without end.
const maxReady = 64

// add queues one message of a conversation.
func (q *queue) add(key, group, person string, m memory.HistoryMessage, o Options) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	b := q.waiting[key]
	if b == nil {
		b = &batch{key: key, group: group, person: person}
		q.waiting[key] = b
	}
	b.msgs = append(b.msgs, m)
	q.pending++
	if len(b.msgs) >= o.BatchSize {
		q.readyLocked(b)
		return
	}
	if b.timer == nil {
		b.timer = time.AfterFunc(o.Debounce, func() { q.fire(b) })
	} else {
		b.timer.Reset(o.Debounce)
	}
}

// fire is the debounce timer of b running out.
func (q *queue) fire(b *batch) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.waiting[b.key] == b && !q.closed {
		q.readyLocked(b)
	}
}

func (q *queue) readyLocked(b *batch) {
	if b.timer != nil {
		b.timer.Stop()
	}
	delete(q.waiting, b.key)
	q.ready = append(q.ready, b)
	for len(q.ready) > maxReady {
		q.pending -= len(q.ready[0].msgs)
		q.ready = q.ready[1:]
	}
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// next takes the oldest ready batch.
func (q *queue) next() *batch {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.ready) == 0 {
		return nil
	}
	b := q.ready[0]
	q.ready = q.ready[1:]
	q.current, q.revoked = b, map[string]bool{}
	return b
}

// done marks a batch read.
func (q *queue) done(b *batch) {
	q.mu.Lock()
	q.pending -= len(b.msgs)
	q.current, q.revoked = nil, nil
	q.mu.Unlock()
}

// drop removes the pending messages match accepts, waiting or ready, so
// that what the relay deleted (a message, a group, a person's data) is
// never read; those of the batch being read now are revoked: nothing
// learnt from them is written (wanted).
func (q *queue) drop(match func(b *batch, m memory.HistoryMessage) bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	filter := func(b *batch) {
		kept := b.msgs[:0]
		for _, m := range b.msgs {
			if match(b, m) {
				q.pending--
				continue
			}
			kept = append(kept, m)
		}
		b.msgs = kept
	}
	for _, b := range q.waiting {
		filter(b)
	}
	for _, b := range q.ready {
		filter(b)
	}
	if b := q.current; b != nil {
		for _, m := range b.msgs {
			if match(b, m) {
				q.revoked[m.EventID] = true
			}
		}
	}
}

// wanted reports whether what was learnt from the message id of the batch
// being read may still be written.
func (q *queue) wanted(id string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return !q.revoked[id]
}

func (q *queue) idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pending == 0
}

func (q *queue) size() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pending
}

// close stops the timers and drops what waits: at shutdown the model is
// not called (the conversation stays in the buffers).
func (q *queue) close() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	n := q.pending
	for _, b := range q.waiting {
		if b.timer != nil {
			b.timer.Stop()
		}
	}
	q.waiting, q.ready, q.pending = map[string]*batch{}, nil, 0
	return n
}
