package memory

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/snowclaw/snowclaw"
)

// DisplayName is one name a person went by and when it was first seen. It
// marshals as the pair ["name", ts] (docs/events.md#d-tag-namespaces-of-kind-30078).
type DisplayName struct {
	Name string
	At   int64
}

func (d DisplayName) MarshalJSON() ([]byte, error) {
	return json.Marshal([]any{d.Name, d.At})
}

// UnmarshalJSON also takes a bare string, which older records used before
// names carried a timestamp.
func (d *DisplayName) UnmarshalJSON(b []byte) error {
	var name string
	if json.Unmarshal(b, &name) == nil {
		*d = DisplayName{Name: name}
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil || len(raw) == 0 {
		return fmt.Errorf("display name: want [\"name\", ts], got %s", b)
	}
	if err := json.Unmarshal(raw[0], &d.Name); err != nil {
		return fmt.Errorf("display name: %w", err)
	}
	d.At = 0
	if len(raw) > 1 {
		d.At = jsonInt(raw[1])
	}
	return nil
}

// Npub is the agent's record of one person
// (docs/agent.md#records-of-people-and-groups).
type Npub struct {
	Pubkey          string            `json:"-"` // hex; carried by the d and p tags
	DisplayNames    []DisplayName     `json:"display_names"`
	FirstSeen       int64             `json:"first_seen"`
	FirstSeenGroup  string            `json:"first_seen_group,omitempty"`
	LastInteraction int64             `json:"last_interaction"`
	Notes           []string          `json:"notes"`
	OwnerNotes      []string          `json:"owner_notes,omitempty"`
	Preferences     map[string]string `json:"preferences"`
	IsOwner         bool              `json:"is_owner"`
	// What the agent learnt about the person, per scope (facets.go):
	// shown only in the private conversation with them, or only in the
	// group it was learnt in. Notes and Preferences above are shown in
	// every conversation with them.
	Private *Facet           `json:"private,omitempty"`
	Groups  map[string]Facet `json:"groups,omitempty"`
}

// MarshalJSON writes empty lists and maps as [] and {} rather than null, the
// shape docs/events.md gives and other readers of the record expect.
func (n Npub) MarshalJSON() ([]byte, error) {
	type plain Npub
	p := plain(n.clone())
	if p.DisplayNames == nil {
		p.DisplayNames = []DisplayName{}
	}
	if p.Notes == nil {
		p.Notes = []string{}
	}
	if p.Preferences == nil {
		p.Preferences = map[string]string{}
	}
	return json.Marshal(p)
}

// Name is the latest display name, or a short npub when none is known, so a
// prompt always has something to call the person.
func (n *Npub) Name() string {
	best := -1
	for i, d := range n.DisplayNames {
		if d.Name != "" && (best < 0 || d.At >= n.DisplayNames[best].At) {
			best = i
		}
	}
	if best >= 0 {
		return n.DisplayNames[best].Name
	}
	return ShortNpub(n.Pubkey)
}

// ShortNpub abbreviates a hex pubkey as "npub1xxxxxxx…"; enough to tell
// people apart in a prompt without spending tokens on the full key.
func ShortNpub(pk string) string {
	npub := snowclaw.NpubOf(pk)
	if !strings.HasPrefix(npub, "npub1") || len(npub) < 13 {
		if len(pk) > 8 {
			return pk[:8] + "…"
		}
		return pk
	}
	return npub[:13] + "…"
}

func (n Npub) clone() Npub {
	n.DisplayNames = slices.Clone(n.DisplayNames)
	n.Notes = slices.Clone(n.Notes)
	n.OwnerNotes = slices.Clone(n.OwnerNotes)
	n.Preferences = maps.Clone(n.Preferences)
	if n.Private != nil {
		f := n.Private.clone()
		n.Private = &f
	}
	if n.Groups != nil {
		gs := make(map[string]Facet, len(n.Groups))
		for g, f := range n.Groups {
			gs[g] = f.clone()
		}
		n.Groups = gs
	}
	return n
}

// jsonInt reads a number that may have been written as an int or a float.
func jsonInt(b json.RawMessage) int64 {
	var f float64
	if json.Unmarshal(b, &f) != nil {
		return 0
	}
	return int64(f)
}
