package extract

import (
	"context"
	"fmt"
	"strings"
	"time"
)

var summarySchema = newSchema(`{
  "type": "object",
  "properties": {
    "summary": {"type": "string", "minLength": 1, "maxLength": 2000}
  },
  "required": ["summary"]
}`)

const summarySystem = `You write the weekly summary of a conversation for an assistant's long-term memory.
In at most eight sentences keep what matters later: facts learnt about the people, their patterns of work, preference changes, and decisions or outcomes, with absolute dates.
Name people as in the transcript. Answer with JSON only: {"summary": "..."}.`

// Summarize asks the model, in one call, for a summary of one week of a
// conversation; where names the conversation and week.
func (l *Learner) Summarize(ctx context.Context, where string, msgs []Message) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Conversation: %s.\n\n", where)
	for _, m := range msgs {
		fmt.Fprintf(&b, "%s — %s: %s\n", time.Unix(m.At, 0).UTC().Format("Mon 2006-01-02 15:04"), m.Sender, m.Text)
	}
	var out struct {
		Summary string `json:"summary"`
	}
	if err := l.call(ctx, "summarize", summarySystem, b.String(), summarySchema, &out); err != nil {
		return "", err
	}
	return strings.TrimSpace(out.Summary), nil
}
