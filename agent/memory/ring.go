package memory

import "sync"

// DefaultHistory is the default ring size, context_history
// (docs/events.md#dynamic-config).
const DefaultHistory = 20

// HistoryMessage is one message of a group's recent conversation
// (docs/agent.md#records-of-people-and-groups). Content is expected to be sanitized already.
type HistoryMessage struct {
	Sender    string `json:"sender"` // display name
	Npub      string `json:"npub"`   // bech32
	Pubkey    string `json:"pubkey"` // hex
	Content   string `json:"content"`
	EventID   string `json:"event_id"`
	Group     string `json:"group,omitempty"`
	Kind      int    `json:"kind"`
	Timestamp int64  `json:"timestamp"`
	IsOwner   bool   `json:"is_owner"`
	Self      bool   `json:"self,omitempty"` // written by the agent itself
}

// Ring keeps the last Cap messages of one conversation, oldest dropped
// first. It has its own lock because the event loop pushes while turns read.
// It is never persisted: after a restart it refills from incoming events.
type Ring struct {
	mu    sync.Mutex
	buf   []HistoryMessage // circular; len(buf) == capacity
	start int              // index of the oldest message
	n     int
}

// NewRing makes a ring holding up to capacity messages. A capacity of 0
// keeps nothing (history switched off); negative counts as 0. Callers apply
// DefaultHistory themselves, as part of config resolution.
func NewRing(capacity int) *Ring {
	return &Ring{buf: make([]HistoryMessage, max(capacity, 0))}
}

// Push appends m, dropping the oldest message when the ring is full.
func (r *Ring) Push(m HistoryMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := len(r.buf)
	if c == 0 {
		return
	}
	if r.n < c {
		r.buf[(r.start+r.n)%c] = m
		r.n++
		return
	}
	r.buf[r.start] = m
	r.start = (r.start + 1) % c
}

// Resize changes the capacity at once: shrinking drops the oldest messages
// now rather than on the next push, so a smaller context_history takes
// effect on the very next turn.
func (r *Ring) Resize(capacity int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	capacity = max(capacity, 0)
	if capacity == len(r.buf) {
		return
	}
	msgs := r.messagesLocked()
	if len(msgs) > capacity {
		msgs = msgs[len(msgs)-capacity:]
	}
	r.buf = make([]HistoryMessage, capacity)
	copy(r.buf, msgs)
	r.start, r.n = 0, len(msgs)
}

// Messages returns a copy of the messages, oldest first.
func (r *Ring) Messages() []HistoryMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.messagesLocked()
}

func (r *Ring) messagesLocked() []HistoryMessage {
	out := make([]HistoryMessage, r.n)
	for i := range r.n {
		out[i] = r.buf[(r.start+i)%len(r.buf)]
	}
	return out
}

// Len is the number of messages held.
func (r *Ring) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// Cap is the number of messages the ring can hold.
func (r *Ring) Cap() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.buf)
}

// DropBefore removes the messages written before ts (compaction: they
// live on in a summary and as events on the relay) and reports how many.
func (r *Ring) DropBefore(ts int64) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	keep := r.messagesLocked()
	n := 0
	for n < len(keep) && keep[n].Timestamp < ts {
		n++
	}
	if n == 0 {
		return 0
	}
	keep = keep[n:]
	clear(r.buf)
	copy(r.buf, keep)
	r.start, r.n = 0, len(keep)
	return n
}
