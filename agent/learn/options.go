package learn

import "time"

// Options configure learning (docs/agent.md#what-the-agent-learns-from-conversation).
// Learning from conversation runs only when Enabled and the model answers
// structured JSON (llm.Structured); with no model nothing of it runs.
type Options struct {
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

func (o *Options) defaults() {
	if o.Debounce <= 0 {
		o.Debounce = 30 * time.Second
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 20
	}
	if o.CallsPerHour <= 0 {
		o.CallsPerHour = 60
	}
	if o.SummaryAfter <= 0 {
		o.SummaryAfter = 7 * 24 * time.Hour
	}
	if o.SummaryTokens <= 0 {
		o.SummaryTokens = 150_000
	}
	if o.SummaryShare <= 0 || o.SummaryShare >= 1 {
		o.SummaryShare = 0.7
	}
	if o.ScopeItems <= 0 {
		o.ScopeItems = 100
	}
	if o.Similar <= 0 || o.Similar > 1 {
		o.Similar = 0.8
	}
}
