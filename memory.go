package snowclaw

import (
	"encoding/json"
	"strings"
)

// MemoryContent is the content of a memory item (docs/events.md): what the
// list, the export, the search index and the agent all read out of one
// event, so that one memory says the same thing in every view.
type MemoryContent struct {
	Summary string `json:"summary"`
	Detail  string `json:"detail,omitempty"`
	Context string `json:"context,omitempty"`
	// Snowclaw is the agent's bookkeeping (agent/memory), kept raw here
	// and nested so that it stays out of the searched text.
	Snowclaw json.RawMessage `json:"snowclaw,omitempty"`
}

// DecodeMemory reads a memory item's plain content: a JSON object
// {summary, detail, context}, or anything else as plain text taken as the
// summary. A JSON object without a summary shows its detail as the
// summary. A JSON object with none of the three (an app's own record) has
// no text: IsEmpty says so, and the caller decides what to show of it.
func DecodeMemory(content string) MemoryContent {
	trimmed := strings.TrimSpace(content)
	var m MemoryContent
	if strings.HasPrefix(trimmed, "{") && json.Unmarshal([]byte(trimmed), &m) == nil {
		if m.Summary == "" {
			m.Summary, m.Detail = m.Detail, ""
		}
		return m
	}
	return MemoryContent{Summary: trimmed}
}

// Encode is the JSON content DecodeMemory reads back.
func (m MemoryContent) Encode() (string, error) {
	b, err := json.Marshal(m)
	return string(b), err
}

// IsEmpty reports whether the content has no summary, detail or context.
func (m MemoryContent) IsEmpty() bool {
	return strings.TrimSpace(m.Summary+m.Detail+m.Context) == ""
}

// HasSummary reports whether the content has a summary: a memory item the
// agent keeps must.
func (m MemoryContent) HasSummary() bool { return strings.TrimSpace(m.Summary) != "" }
