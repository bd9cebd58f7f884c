package agent

import (
	"sync"
	"time"

	"github.com/snowclaw/snowclaw/agent/memory"
)

// LearningOptions configure learning from conversation (docs/agent.md). It
// runs only when Enabled and the model answers structured JSON
// (llm.Structured); with no model nothing of it runs.
type LearningOptions struct {
	Enabled bool
	// Debounce is how long a conversation must be quiet before its new
	// messages are read for memories; 0 = 30s.
	Debounce time.Duration
	// BatchSize reads a busy conversation once this many messages wait,
	// quiet or not (one model call per batch); 0 = 20.
	BatchSize int
	// CallsPerHour caps learning's model calls; 0 = 60.
	CallsPerHour int
	// CompactEvery is how often consolidation runs; 0 = never on its own
	// (memory compact still runs it).
	CompactEvery time.Duration
	// SummaryAfter: buffered conversation older than this is summarized
	// into one memory per group or person and week; 0 = 7 days.
	SummaryAfter time.Duration
	// SummaryTokens: when what is not summarized yet of one conversation
	// passes this many tokens, its oldest SummaryShare is summarized at
	// once, whatever its age (docs/agent.md#consolidation-dreaming); 0 = 150,000.
	SummaryTokens int
	// SummaryShare is that oldest share (0–1); 0 = 0.7.
	SummaryShare float64
	// ScopeItems caps the memories of one group or person; 0 = 100.
	ScopeItems int
	// Similar is the word overlap (Jaccard, 0–1) above which two memories
	// of one scope are near-duplicates merged by compaction; 0 = 0.8.
	Similar float64
}

func (l *LearningOptions) defaults() {
	if l.Debounce <= 0 {
		l.Debounce = 30 * time.Second
	}
	if l.BatchSize <= 0 {
		l.BatchSize = 20
	}
	if l.CallsPerHour <= 0 {
		l.CallsPerHour = 60
	}
	if l.SummaryAfter <= 0 {
		l.SummaryAfter = 7 * 24 * time.Hour
	}
	if l.SummaryTokens <= 0 {
		l.SummaryTokens = 150_000
	}
	if l.SummaryShare <= 0 || l.SummaryShare >= 1 {
		l.SummaryShare = 0.7
	}
	if l.ScopeItems <= 0 {
		l.ScopeItems = 100
	}
	if l.Similar <= 0 || l.Similar > 1 {
		l.Similar = 0.8
	}
}

// batch is the messages of one conversation waiting to be read.
type batch struct {
	key    string // group id, or dmKey(person)
	group  string // "" in private
	person string // the private conversation's person
	msgs   []memory.HistoryMessage
	timer  *time.Timer
}

// learnQueue debounces conversations: a conversation's batch is ready
// once it has been quiet for Debounce or holds BatchSize messages. The
// learn loop takes ready batches one at a time.
type learnQueue struct {
	mu      sync.Mutex
	waiting map[string]*batch // still collecting
	ready   []*batch          // oldest first
	pending int               // messages queued or being read (Idle)
	signal  chan struct{}
	closed  bool

	current *batch          // being read by the learn loop
	revoked map[string]bool // event ids of current's messages deleted meanwhile
}

func newLearnQueue() *learnQueue {
	return &learnQueue{waiting: map[string]*batch{}, signal: make(chan struct{}, 1)}
}

// maxReady bounds the messages waiting for the model: when the model is
// slower than the conversation, the oldest batches are dropped rather
// than RAM growing without end.
const maxReady = 64

// add queues one message of a conversation.
func (q *learnQueue) add(key, group, person string, m memory.HistoryMessage, o LearningOptions) {
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
func (q *learnQueue) fire(b *batch) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.waiting[b.key] == b && !q.closed {
		q.readyLocked(b)
	}
}

func (q *learnQueue) readyLocked(b *batch) {
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
func (q *learnQueue) next() *batch {
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
func (q *learnQueue) done(b *batch) {
	q.mu.Lock()
	q.pending -= len(b.msgs)
	q.current, q.revoked = nil, nil
	q.mu.Unlock()
}

// drop removes the pending messages match accepts, waiting or ready, so
// that what the relay deleted (a message, a group, a person's data) is
// never read; those of the batch being read now are revoked: nothing
// learnt from them is written (wanted).
func (q *learnQueue) drop(match func(b *batch, m memory.HistoryMessage) bool) {
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
func (q *learnQueue) wanted(id string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return !q.revoked[id]
}

func (q *learnQueue) idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pending == 0
}

func (q *learnQueue) size() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pending
}

// close stops the timers and drops what waits: at shutdown the model is
// not called (the conversation stays in the buffers).
func (q *learnQueue) close() int {
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
