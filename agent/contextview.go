package agent

import (
	"time"

	"github.com/snowclaw/snowclaw/agent/prompt"
)

// ContextView says what went into the last prompt of a conversation
// (docs/agent.md#using-it): which memories were recalled and kept within
// the token budget, and what the budget cut.
type ContextView struct {
	Message   string         `json:"message"`    // the event id answered
	MemoryIDs []string       `json:"memory_ids"` // recalled memory items in the prompt, best first
	Dropped   []string       `json:"dropped"`    // recalled but cut by the token budget
	Tokens    int            `json:"tokens"`
	Budget    int            `json:"budget"`
	Trimmed   prompt.Trimmed `json:"trimmed"`
	At        time.Time      `json:"at"`
}

// noteContext keeps the view of the prompt just built for t. The budget
// drops the least relevant memories first (prompt.Assemble), so the kept
// ones are the first len-Trimmed.Memories.
func (a *Agent) noteContext(t turn, ids []string, p prompt.Prompt) {
	keep := max(len(ids)-p.Trimmed.Memories, 0)
	v := ContextView{
		Message: t.msg.EventID, MemoryIDs: append([]string{}, ids[:keep]...), Dropped: append([]string{}, ids[keep:]...),
		Tokens: p.Tokens, Budget: a.o.TokenBudget, Trimmed: p.Trimmed, At: a.o.Now().UTC(),
	}
	key := t.group
	if t.private {
		key = dmKey(t.sender)
	}
	a.mu.Lock()
	a.contexts[key] = v
	a.mu.Unlock()
}

// LastContext returns the view of the last prompt built for a group or a
// person's private conversation.
func (a *Agent) LastContext(s Subject) (ContextView, bool) {
	key := s.Group
	if key == "" {
		key = dmKey(s.Pubkey)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	v, ok := a.contexts[key]
	return v, ok
}
