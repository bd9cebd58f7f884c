package memory

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Member is a known member of a group; it marshals as [npub, name].
type Member struct {
	Npub string // bech32 npub1…
	Name string
}

func (m Member) MarshalJSON() ([]byte, error) { return json.Marshal([]string{m.Npub, m.Name}) }

func (m *Member) UnmarshalJSON(b []byte) error {
	var v []string
	if err := json.Unmarshal(b, &v); err != nil || len(v) == 0 {
		return fmt.Errorf("member: want [npub, name], got %s", b)
	}
	m.Npub, m.Name = v[0], ""
	if len(v) > 1 {
		m.Name = v[1]
	}
	return nil
}

// Decision is a decision made in a group; it marshals as [text, ts].
type Decision struct {
	Text string
	At   int64
}

func (d Decision) MarshalJSON() ([]byte, error) { return json.Marshal([]any{d.Text, d.At}) }

// UnmarshalJSON also takes a bare string: a decision without a date is
// still worth keeping.
func (d *Decision) UnmarshalJSON(b []byte) error {
	var text string
	if json.Unmarshal(b, &text) == nil {
		*d = Decision{Text: text}
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil || len(raw) == 0 {
		return fmt.Errorf("decision: want [text, ts], got %s", b)
	}
	if err := json.Unmarshal(raw[0], &d.Text); err != nil {
		return fmt.Errorf("decision: %w", err)
	}
	d.At = 0
	if len(raw) > 1 {
		d.At = jsonInt(raw[1])
	}
	return nil
}

// Group is the agent's record of one NIP-29 group
// (docs/agent.md#records-of-people-and-groups).
type Group struct {
	ID           string     `json:"-"` // carried by the d and h tags
	Name         string     `json:"name,omitempty"`
	Purpose      string     `json:"purpose,omitempty"`
	Members      []Member   `json:"members"`
	Themes       []string   `json:"themes"`
	Decisions    []Decision `json:"decisions"`
	LastActivity int64      `json:"last_activity"`
}

// MarshalJSON writes empty lists as [] rather than null (see Npub).
func (g Group) MarshalJSON() ([]byte, error) {
	type plain Group
	p := plain(g.clone())
	if p.Members == nil {
		p.Members = []Member{}
	}
	if p.Themes == nil {
		p.Themes = []string{}
	}
	if p.Decisions == nil {
		p.Decisions = []Decision{}
	}
	return json.Marshal(p)
}

func (g Group) clone() Group {
	g.Members = slices.Clone(g.Members)
	g.Themes = slices.Clone(g.Themes)
	g.Decisions = slices.Clone(g.Decisions)
	return g
}
