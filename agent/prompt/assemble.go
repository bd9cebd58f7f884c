package prompt

import (
	"github.com/snowclaw/snowclaw/agent/llm"
)

// DefaultBudget is the token budget when Input.Budget is not set: small
// enough for the common 8k-context local models.
const DefaultBudget = 8192

// Sender is what the agent knows about the author of the current message.
type Sender struct {
	Pubkey, Npub, Name string
	Owner              bool
	Notes              []string // the agent's observations, oldest first
	OwnerNotes         []string // the owner's annotations, oldest first
	Prefs              map[string]string
}

// Group is the agent's memory of the group the message was posted in.
type Group struct {
	ID, Name, Purpose string
	Themes            []string // most characteristic first
	Decisions         []string // oldest first
	Members           []string // display names
}

// Input is everything one turn's prompt is built from. All text must already
// be sanitized.
type Input struct {
	AgentName, AgentNpub string
	OwnerName, OwnerNpub string
	Instructions         string // behavioural instructions; DefaultInstructions when empty
	Group                *Group // nil in a private conversation
	Sender               Sender
	History              []Line   // oldest first, without the current message
	Memories             []string // recalled long-term memories, best first
	Lessons              []string // lessons learnt, best first
	Current              Line
	Budget               int // token budget for the whole prompt; 0 → DefaultBudget
}

// Prompt is the assembled context: one system message and one user message.
type Prompt struct {
	Messages []llm.Message
	Tokens   int // Counter's count of all message contents together
	Trimmed  Trimmed
}

// Trimmed tells how many items of each kind were dropped to fit the budget.
type Trimmed struct {
	History, Memories, Lessons, Decisions, Themes, Notes int
	// Over is set when even the parts that are never trimmed exceed the
	// budget; the prompt then holds only those parts.
	Over bool
}

// Assemble builds the prompt for one turn and trims it to in.Budget tokens as
// counted by c.
//
// Trimming priority (docs/agent.md#context), from never dropped to dropped first:
//   - never: the system prompt (identity, owner, conversation,
//     instructions), the current message, and the sender's name, npub,
//     owner flag and preferences: without them the model cannot answer the
//     right person in the right way;
//   - dropped first: conversation history, oldest line first, since the
//     recent lines matter most for a reply;
//   - then recalled memories, least relevant (last) first;
//   - then lessons, least relevant (last) first;
//   - then group decisions, oldest first, and then group themes, last first;
//   - last: sender notes, the agent's notes before the owner's (the owner
//     wrote those on purpose), oldest first within each.
//
// Each category is emptied before the next one is touched, so the result is
// determined by a single number of dropped items; that number is found by
// binary search over exact counts of the rendered messages.
func Assemble(in Input, c Counter) Prompt {
	if c == nil {
		c = DefaultCounter()
	}
	budget := in.Budget
	if budget <= 0 {
		budget = DefaultBudget
	}
	total := len(in.History) + len(in.Memories) + len(in.Lessons) +
		len(in.Sender.Notes) + len(in.Sender.OwnerNotes)
	if in.Group != nil {
		total += len(in.Group.Decisions) + len(in.Group.Themes)
	}

	type result struct {
		msgs   []llm.Message
		tokens int
		cut    cut
	}
	build := func(n int) result {
		k := cutAfter(&in, n)
		sys, user := renderSystem(&in, k), renderUser(&in, k)
		return result{
			msgs: []llm.Message{
				{Role: llm.RoleSystem, Content: sys},
				{Role: llm.RoleUser, Content: user},
			},
			tokens: c.Count(sys) + c.Count(user),
			cut:    k,
		}
	}

	best := build(0)
	over := false
	if best.tokens > budget {
		all := build(total)
		if all.tokens > budget {
			best, over = all, true
		} else {
			// Invariant: lo does not fit, hi fits.
			lo, hi := 0, total
			best = all
			for hi-lo > 1 {
				mid := lo + (hi-lo)/2
				if r := build(mid); r.tokens <= budget {
					hi, best = mid, r
				} else {
					lo = mid
				}
			}
		}
	}
	t := best.cut.trimmed()
	t.Over = over
	return Prompt{Messages: best.msgs, Tokens: best.tokens, Trimmed: t}
}

// cut records how many items of each category are dropped.
type cut struct {
	history, memories, lessons, decisions, themes, notes, ownerNotes int
}

func (k cut) trimmed() Trimmed {
	return Trimmed{
		History:   k.history,
		Memories:  k.memories,
		Lessons:   k.lessons,
		Decisions: k.decisions,
		Themes:    k.themes,
		Notes:     k.notes + k.ownerNotes,
	}
}

// cutAfter spreads n dropped items over the categories in priority order.
func cutAfter(in *Input, n int) cut {
	take := func(avail int) int {
		d := min(n, avail)
		n -= d
		return d
	}
	var k cut
	k.history = take(len(in.History))
	k.memories = take(len(in.Memories))
	k.lessons = take(len(in.Lessons))
	if in.Group != nil {
		k.decisions = take(len(in.Group.Decisions))
		k.themes = take(len(in.Group.Themes))
	}
	k.notes = take(len(in.Sender.Notes))
	k.ownerNotes = take(len(in.Sender.OwnerNotes))
	return k
}
