package learn

import (
	"sync/atomic"

	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/extract"
)

// Stats are learning's counters: what the model calls cost and what they
// wrote.
type Stats struct {
	Enabled bool `json:"enabled"`
	extract.Stats
	Pending       int    `json:"pending"` // messages waiting to be read
	Added         uint64 `json:"added"`
	Updated       uint64 `json:"updated"`
	Ignored       uint64 `json:"ignored"`
	FrozenSkipped uint64 `json:"frozen_skipped"`
	Dropped       uint64 `json:"dropped_batches"`
	Compactions   uint64 `json:"compactions"`
}

// counters count what learning has written.
type counters struct {
	added, updated, ignored, frozenSkipped, dropped, compactions atomic.Uint64
}

// Stats returns the counters; all zero when learning from conversation
// is off.
func (l *Learning) Stats() Stats {
	if l.model == nil {
		return Stats{}
	}
	return Stats{
		Enabled: true, Stats: l.model.Stats(), Pending: l.q.size(),
		Added: l.st.added.Load(), Updated: l.st.updated.Load(), Ignored: l.st.ignored.Load(),
		FrozenSkipped: l.st.frozenSkipped.Load(), Dropped: l.st.dropped.Load(), Compactions: l.st.compactions.Load(),
	}
}

// Status is what learning is doing (`snowclaw memory status`).
type Status struct {
	Enabled       bool    `json:"enabled"`
	Why           string  `json:"why,omitempty"` // why it is off
	Model         string  `json:"model,omitempty"`
	Debounce      string  `json:"debounce"`
	BatchSize     int     `json:"batch_size"`
	CallsPerHour  int     `json:"calls_per_hour"`
	CompactEvery  string  `json:"compact_every"`
	SummaryAfter  string  `json:"summary_after"`
	SummaryTokens int     `json:"summary_tokens"`
	SummaryShare  float64 `json:"summary_share"`
	ScopeItems    int     `json:"scope_items"`
	Stats         Stats   `json:"stats"`
	Items         int     `json:"items"`
	// LastSummary is the newest weekly summary the agent holds (nil:
	// none yet).
	LastSummary *SummaryNote `json:"last_summary,omitempty"`
}

// SummaryNote names one weekly summary: its conversation (a group, or a
// person in private), the stretch its topic says it covers, and its text.
type SummaryNote struct {
	ID        string        `json:"id"`
	Topic     string        `json:"topic"`
	Tier      snowclaw.Tier `json:"tier"`
	Group     string        `json:"group,omitempty"`
	Person    string        `json:"person,omitempty"` // npub, private conversations
	Text      string        `json:"text"`
	CreatedAt int64         `json:"created_at"`
}

// Status reports learning's settings and counters, and why it is off
// when it is.
func (l *Learning) Status() Status {
	o := l.o
	st := Status{
		Enabled: l.model != nil, Debounce: o.Debounce.String(), BatchSize: o.BatchSize,
		CallsPerHour: o.CallsPerHour, CompactEvery: "never (memory compact only)", SummaryAfter: o.SummaryAfter.String(),
		SummaryTokens: o.SummaryTokens, SummaryShare: o.SummaryShare,
		ScopeItems: o.ScopeItems, Stats: l.Stats(),
	}
	items := l.mem.Items()
	st.Items = len(items)
	st.LastSummary = lastSummary(items)
	if o.CompactEvery > 0 {
		st.CompactEvery = o.CompactEvery.String()
	}
	if l.env.LLM != nil {
		st.Model = l.env.LLM.Name()
	}
	switch {
	case l.env.LLM == nil:
		st.Why = "no model configured ([agent] ollama_model): the agent keeps memory but neither replies nor learns"
	case !o.Enabled:
		st.Why = "learning is turned off ([agent.learning] enabled = false)"
	case l.model == nil:
		st.Why = "the model does not answer structured JSON"
	}
	return st
}
