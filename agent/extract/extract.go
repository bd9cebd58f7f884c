package extract

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Kinds of what is learnt (the list).
const (
	KindFact       = "fact"
	KindPreference = "preference"
	KindDecision   = "decision"
	KindPlan       = "plan"
	KindEvent      = "event"
)

// Message is one message of the batch as the model is shown it.
type Message struct {
	Sender string // display name
	Pubkey string // hex
	At     int64  // created_at
	Text   string // sanitized
}

// Candidate is one thing worth remembering, after Go's checks: its date is
// absolute and its message exists.
type Candidate struct {
	Text       string
	Kind       string
	Message    int    // index in the batch of the message it came from
	About      string // hex pubkey of the person it is about; "" for the conversation as a whole
	Confidence float64
	Topics     []string
	Date       string // YYYY-MM-DD when it has a date
}

// extractSchema is what the model must answer (Ollama structured outputs):
// one object with a list; "message" numbers the message it came from,
// "about" says whether it is about that message's sender or the
// conversation, "when" quotes a relative date as said.
var extractSchema = newSchema(`{
  "type": "object",
  "properties": {
    "memories": {
      "type": "array",
      "maxItems": 32,
      "items": {
        "type": "object",
        "properties": {
          "text": {"type": "string", "minLength": 1, "maxLength": 500},
          "kind": {"type": "string", "enum": ["fact", "preference", "decision", "plan", "event"]},
          "message": {"type": "integer", "minimum": 1},
          "about": {"type": "string", "enum": ["sender", "conversation"]},
          "confidence": {"type": "number", "minimum": 0, "maximum": 1},
          "topics": {"type": "array", "maxItems": 5, "items": {"type": "string", "maxLength": 40}},
          "when": {"type": "string", "maxLength": 60},
          "date": {"type": "string", "maxLength": 10}
        },
        "required": ["text", "kind", "message", "about", "confidence"]
      }
    }
  },
  "required": ["memories"]
}`)

const extractSystem = `You extract durable memories from a conversation for an assistant's long-term memory.
Keep only what stays useful later: facts about people, their preferences, decisions taken, plans and dated events.
Skip greetings, questions, jokes, opinions of the moment and anything already obvious.
Write each memory as one short self-contained sentence that names the person (as in the transcript) instead of "I" or "me".
For each memory give: "message", the number of the message it comes from; "about", "sender" when it is about that message's author, "conversation" when it is about the group or several people; "confidence" from 0 to 1; up to 5 lowercase "topics"; and when a date is meant, "when" quoting the date as said (e.g. "next Friday") and "date" as YYYY-MM-DD counted from that message's date.
Answer with JSON only. An empty list is a fine answer.`

type rawCandidate struct {
	Text       string   `json:"text"`
	Kind       string   `json:"kind"`
	Message    int      `json:"message"`
	About      string   `json:"about"`
	Confidence float64  `json:"confidence"`
	Topics     []string `json:"topics"`
	When       string   `json:"when"`
	Date       string   `json:"date"`
}

// Extract asks the model what the batch contains worth remembering. where
// names the conversation for the model ("the group Agent Room", "a private
// conversation"). Candidates pointing at no message are dropped; relative
// dates are made absolute against their message's time (Absolutize); a
// date the model gave for a phrase Go cannot read is kept only if it is a
// real date.
func (l *Learner) Extract(ctx context.Context, where string, msgs []Message) ([]Candidate, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Conversation: %s.\n\n", where)
	for i, m := range msgs {
		fmt.Fprintf(&b, "[%d] %s — %s:\n%s\n\n", i+1, time.Unix(m.At, 0).UTC().Format("Monday 2006-01-02 15:04 UTC"), m.Sender, m.Text)
	}
	var raw struct {
		Memories []rawCandidate `json:"memories"`
	}
	if err := l.call(ctx, "extract", extractSystem, b.String(), extractSchema, &raw); err != nil {
		return nil, err
	}
	var out []Candidate
	for _, r := range raw.Memories {
		if r.Message < 1 || r.Message > len(msgs) || strings.TrimSpace(r.Text) == "" {
			continue
		}
		m := msgs[r.Message-1]
		at := time.Unix(m.At, 0)
		text, date := Absolutize(strings.TrimSpace(r.Text), at)
		if date == "" && r.When != "" {
			_, date = Absolutize(r.When, at)
		}
		if date == "" {
			date = ValidDate(r.Date, at)
		}
		if date != "" && !strings.Contains(text, date[:7]) {
			text += " (" + date + ")"
		}
		c := Candidate{Text: text, Kind: r.Kind, Message: r.Message - 1, Confidence: r.Confidence, Topics: cleanTopics(r.Topics), Date: date}
		if r.About == "sender" {
			c.About = m.Pubkey
		}
		out = append(out, c)
	}
	return out, nil
}

func cleanTopics(in []string) []string {
	var out []string
	for _, t := range in {
		t = strings.ToLower(strings.TrimSpace(t))
		if t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}
