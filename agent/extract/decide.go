package extract

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Actions Decide chooses between.
const (
	ActionAdd     = "ADD"     // a new memory
	ActionUpdate  = "UPDATE"  // a new version of Target (it supersedes it)
	ActionNothing = "NOTHING" // already known, or not worth a change
)

// Existing is a stored memory a candidate resembles.
type Existing struct {
	ID   string
	Text string
	At   int64 // last updated
}

// Decision is what to do with one candidate.
type Decision struct {
	Action string
	Target string // the Existing.ID an UPDATE replaces
}

var decideSchema = newSchema(`{
  "type": "object",
  "properties": {
    "decisions": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "candidate": {"type": "integer", "minimum": 1},
          "action": {"type": "string", "enum": ["ADD", "UPDATE", "NOTHING"]},
          "target": {"type": "string"}
        },
        "required": ["candidate", "action"]
      }
    }
  },
  "required": ["decisions"]
}`)

const decideSystem = `You keep an assistant's long-term memory clean. For each new candidate memory you see the stored memories most like it.
Answer ADD when it is new information, UPDATE with "target" set to the id of the stored memory it corrects or replaces (a change, a contradiction, or a more precise version of it), NOTHING when it is already stored or adds nothing.
Answer with JSON only: one decision per candidate.`

// Decide asks the model, in one call, what to do with each candidate given
// the stored memories like it (similar[i] for cands[i]). A candidate with
// no similar memory is added without asking. An UPDATE naming a memory
// that was not shown for its candidate is taken as ADD, and so is a
// candidate the model left out: what was extracted is not silently lost,
// and compaction merges what turns out to repeat.
func (l *Learner) Decide(ctx context.Context, cands []Candidate, similar [][]Existing) ([]Decision, error) {
	out := make([]Decision, len(cands))
	var b strings.Builder
	asked := 0
	for i, c := range cands {
		out[i] = Decision{Action: ActionAdd}
		if i >= len(similar) || len(similar[i]) == 0 {
			continue
		}
		asked++
		fmt.Fprintf(&b, "Candidate %d: %s\nStored memories like it:\n", i+1, c.Text)
		for _, e := range similar[i] {
			fmt.Fprintf(&b, "- id %s (%s): %s\n", e.ID, time.Unix(e.At, 0).UTC().Format(time.DateOnly), e.Text)
		}
		b.WriteString("\n")
	}
	if asked == 0 {
		return out, nil
	}
	var raw struct {
		Decisions []struct {
			Candidate int    `json:"candidate"`
			Action    string `json:"action"`
			Target    string `json:"target"`
		} `json:"decisions"`
	}
	if err := l.call(ctx, "decide", decideSystem, b.String(), decideSchema, &raw); err != nil {
		return nil, err
	}
	for _, d := range raw.Decisions {
		i := d.Candidate - 1
		if i < 0 || i >= len(cands) || i >= len(similar) || len(similar[i]) == 0 {
			continue
		}
		switch d.Action {
		case ActionNothing:
			out[i] = Decision{Action: ActionNothing}
		case ActionUpdate:
			for _, e := range similar[i] {
				if e.ID == strings.TrimSpace(d.Target) {
					out[i] = Decision{Action: ActionUpdate, Target: e.ID}
				}
			}
		}
	}
	return out, nil
}
