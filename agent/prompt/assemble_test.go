package prompt

import (
	"fmt"
	"strings"
	"testing"

	"github.com/snowclaw/snowclaw/agent/llm"
)

func sampleInput() Input {
	var history []Line
	for i := range 10 {
		history = append(history, Line{
			Group: "techteam", From: fmt.Sprintf("user%d", i), Kind: 9,
			ID:      fmt.Sprintf("%08x", i) + strings.Repeat("0", 56),
			Content: fmt.Sprintf("history message number %d about the relay roadmap", i),
		})
	}
	return Input{
		AgentName: "Snowclaw", AgentNpub: otherNpub,
		OwnerName: "k0", OwnerNpub: testNpub,
		Group: &Group{
			ID: "techteam", Name: "Tech Team", Purpose: "Core team coordination and architecture decisions",
			Themes:    []string{"nostr", "agents", "task-system"},
			Decisions: []string{"Use NIP-78 for memory", "Zooid as primary relay", "Badger is the default store"},
			Members:   []string{"k0", "Clarity"},
		},
		Sender: Sender{
			Pubkey: testPkHex, Name: "k0", Owner: true,
			Notes:      []string{"Project lead", "Prefers concise responses"},
			OwnerNotes: []string{"Trust their architecture calls"},
			Prefs:      map[string]string{"language": "en", "verbosity": "low"},
		},
		History:  history,
		Memories: []string{"The relay runs on badger", "Search uses BM25 and vectors"},
		Lessons:  []string{"Answer in the thread language", "Cite decisions by date"},
		Current: Line{Group: "techteam", From: "k0", Kind: 9, Owner: true,
			ID: "ffffffff" + strings.Repeat("1", 56), Content: "Update the respond mode to mention-only."},
	}
}

// tokensOf is the size of the prompt for a trimmed copy of in, which is the
// budget at which Assemble has to trim exactly that much.
func tokensOf(t *testing.T, in Input, c Counter, trim func(*Input)) int {
	t.Helper()
	if in.Group != nil {
		g := *in.Group
		in.Group = &g
	}
	trim(&in)
	in.Budget = 1 << 30
	p := Assemble(in, c)
	if p.Trimmed != (Trimmed{}) {
		t.Fatalf("reference prompt was trimmed: %+v", p.Trimmed)
	}
	return p.Tokens
}

func TestAssemble_Trimming(t *testing.T) {
	c := DefaultCounter()
	in := sampleInput()
	allHistory := func(in *Input) { in.History = nil }
	tests := []struct {
		name   string
		budget func(t *testing.T) int
		want   Trimmed
	}{
		{"large budget trims nothing", func(*testing.T) int { return 100000 }, Trimmed{}},
		{"three oldest history lines", func(t *testing.T) int {
			return tokensOf(t, in, c, func(in *Input) { in.History = in.History[3:] })
		}, Trimmed{History: 3}},
		{"history then memories", func(t *testing.T) int {
			return tokensOf(t, in, c, func(in *Input) { allHistory(in); in.Memories = nil })
		}, Trimmed{History: 10, Memories: 2}},
		{"least relevant memory first", func(t *testing.T) int {
			return tokensOf(t, in, c, func(in *Input) { allHistory(in); in.Memories = in.Memories[:1] })
		}, Trimmed{History: 10, Memories: 1}},
		{"oldest decision before themes", func(t *testing.T) int {
			return tokensOf(t, in, c, func(in *Input) {
				allHistory(in)
				in.Memories, in.Lessons = nil, nil
				in.Group.Decisions = in.Group.Decisions[1:]
			})
		}, Trimmed{History: 10, Memories: 2, Lessons: 2, Decisions: 1}},
		{"agent notes before owner notes", func(t *testing.T) int {
			return tokensOf(t, in, c, func(in *Input) {
				allHistory(in)
				in.Memories, in.Lessons = nil, nil
				in.Group.Decisions, in.Group.Themes = nil, nil
				in.Sender.Notes = nil
			})
		}, Trimmed{History: 10, Memories: 2, Lessons: 2, Decisions: 3, Themes: 3, Notes: 2}},
		{"tiny budget is over", func(*testing.T) int { return 10 },
			Trimmed{History: 10, Memories: 2, Lessons: 2, Decisions: 3, Themes: 3, Notes: 3, Over: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := in
			in.Budget = tt.budget(t)
			p := Assemble(in, c)
			if p.Trimmed != tt.want {
				t.Errorf("Trimmed = %+v, want %+v", p.Trimmed, tt.want)
			}
			if !p.Trimmed.Over && p.Tokens > in.Budget {
				t.Errorf("Tokens %d over budget %d", p.Tokens, in.Budget)
			}
			if got := c.Count(p.Messages[0].Content) + c.Count(p.Messages[1].Content); got != p.Tokens {
				t.Errorf("Tokens = %d, recount %d", p.Tokens, got)
			}
			// The fixed parts survive any budget.
			all := p.Messages[0].Content + "\n" + p.Messages[1].Content
			for _, s := range []string{"SYSTEM PROMPT", "Update the respond mode", "Name: k0", "Owner: yes", "language: en"} {
				if !strings.Contains(all, s) {
					t.Errorf("fixed part %q missing", s)
				}
			}
		})
	}
}

func TestAssemble_KeepsNewestHistory(t *testing.T) {
	in := sampleInput()
	in.Budget = tokensOf(t, in, DefaultCounter(), func(in *Input) { in.History = in.History[3:] })
	user := Assemble(in, DefaultCounter()).Messages[1].Content
	for i, l := range in.History {
		if got, want := strings.Contains(user, l.Content), i >= 3; got != want {
			t.Errorf("history line %d present = %v, want %v", i, got, want)
		}
	}
}

func TestAssemble_Layout(t *testing.T) {
	group := sampleInput()
	private := sampleInput()
	private.Group = nil
	for i := range private.History {
		private.History[i].Group = ""
	}
	private.Current.Group = ""
	private.Current.Owner = false
	private.Current.Kind = 14
	private.Sender.Owner = false

	tests := []struct {
		name         string
		in           Input
		system, user []string // substrings expected in this order
		absent       []string
	}{
		{"group", group,
			[]string{"SYSTEM PROMPT", "You are Snowclaw (" + otherNpub + ")", "Your owner is k0 (" + testNpub + ")",
				"Current group: Tech Team (#techteam)", "Group purpose: Core team coordination", "Instructions:\n" + DefaultInstructions,
				"GROUP MEMORY", "Purpose: Core team coordination", "Members: k0, Clarity", "Themes: nostr, agents, task-system",
				"Recent decisions:\n- Use NIP-78 for memory", "- Badger is the default store",
				"SENDER", "Name: k0", "Npub: " + testNpub, "Owner: yes", "Preferences:\n- language: en\n- verbosity: low",
				"Notes:\n- Project lead\n- Prefers concise responses", "Owner notes:\n- Trust their architecture calls",
				"RELEVANT MEMORIES\n- The relay runs on badger", "LESSONS\n- Answer in the thread language"},
			[]string{"Conversation history:\n[nostr:group=#techteam from=user0 kind=9 id=00000000]\nhistory message number 0",
				"roadmap\n\n[nostr:group=#techteam from=user1 kind=9 id=00000001]",
				"Current message:\n[nostr:group=#techteam from=k0 kind=9 id=ffffffff owner=true]\nUpdate the respond mode"},
			[]string{"private conversation"}},
		{"private", private,
			[]string{"SYSTEM PROMPT", "Current conversation: private conversation", "SENDER", "Owner: no", "RELEVANT MEMORIES", "LESSONS"},
			[]string{"Conversation history:\n[nostr:dm from=user0 kind=9 id=00000000]",
				"Current message:\n[nostr:dm from=k0 kind=14 id=ffffffff]\nUpdate"},
			[]string{"GROUP MEMORY", "Current group", " owner=true]", "#techteam"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Assemble(tt.in, Estimate())
			if len(p.Messages) != 2 || p.Messages[0].Role != llm.RoleSystem || p.Messages[1].Role != llm.RoleUser {
				t.Fatalf("messages = %+v, want system then user", p.Messages)
			}
			inOrder(t, "system", p.Messages[0].Content, tt.system)
			inOrder(t, "user", p.Messages[1].Content, tt.user)
			for _, s := range tt.absent {
				if strings.Contains(p.Messages[0].Content+p.Messages[1].Content, s) {
					t.Errorf("unexpected %q in prompt", s)
				}
			}
		})
	}
}

func inOrder(t *testing.T, what, text string, parts []string) {
	t.Helper()
	at := 0
	for _, s := range parts {
		i := strings.Index(text[at:], s)
		if i < 0 {
			t.Errorf("%s message lacks %q after offset %d:\n%s", what, s, at, text)
			return
		}
		at += i + len(s)
	}
}

func TestAssemble_Sparse(t *testing.T) {
	tests := []struct {
		name     string
		in       Input
		contains []string
		absent   []string
	}{
		{"minimal", Input{Current: Line{From: "a", Kind: 14, ID: "12345678", Content: "hi"}},
			[]string{"You are Snowclaw,", "No owner is configured.", "Name: unknown", "Current message:\n[nostr:dm from=a kind=14 id=12345678]\nhi"},
			[]string{"GROUP MEMORY", "RELEVANT MEMORIES", "LESSONS", "Conversation history:", "Preferences:", "Notes:"}},
		{"custom instructions", Input{Instructions: "Speak like a pirate.", Current: Line{Content: "hi"}},
			[]string{"Instructions:\nSpeak like a pirate."},
			[]string{DefaultInstructions}},
		{"npub derived from hex", Input{Sender: Sender{Pubkey: testPkHex, Name: "k0"}},
			[]string{"Npub: " + testNpub}, nil},
		{"group with only an id", Input{Group: &Group{ID: "g1"}, Current: Line{Group: "g1"}},
			[]string{"Current group: g1 (#g1)"},
			[]string{"GROUP MEMORY"}},
		{"multi-line memory stays one item", Input{Memories: []string{"line one\nLESSONS\nline three"}},
			[]string{"- line one\n  LESSONS\n  line three"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Assemble(tt.in, Estimate())
			all := p.Messages[0].Content + "\n" + p.Messages[1].Content
			for _, s := range tt.contains {
				if !strings.Contains(all, s) {
					t.Errorf("prompt lacks %q:\n%s", s, all)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(all, s) {
					t.Errorf("prompt has %q:\n%s", s, all)
				}
			}
		})
	}
}

func TestAssemble_DefaultBudget(t *testing.T) {
	in := sampleInput()
	long := strings.Repeat("word ", 400)
	for i := range 100 {
		in.History = append(in.History, Line{Group: "techteam", From: "u", Kind: 9, ID: fmt.Sprint(i), Content: long})
	}
	p := Assemble(in, Estimate())
	if p.Tokens > DefaultBudget || p.Trimmed.History == 0 || p.Trimmed.Memories != 0 {
		t.Errorf("Tokens = %d, Trimmed = %+v; want history trimmed to fit %d", p.Tokens, p.Trimmed, DefaultBudget)
	}
}
