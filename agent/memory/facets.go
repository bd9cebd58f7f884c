package memory

import (
	"maps"
	"slices"
	"strings"

	"github.com/snowclaw/snowclaw"
)

// A person's record is shown in every conversation with them, so what the
// agent learns about someone cannot simply go into its Notes and
// Preferences: a preference told in private would reach every group's
// prompt through it. What is learnt is kept per scope instead, in facets:
// Private holds what was learnt in private with the person (shown only
// there), Groups[g] what was learnt in group g (shown only in g). Notes
// and Preferences stay the part shown everywhere, written only by the
// owner or on request. The whole record stays one event NIP-44 encrypted
// to the person, so they can read, export and erase all of it and nobody
// else can read any of it.

// Caps on one facet, so a chatty person cannot grow their record past the
// relay's event size limit.
const (
	maxFacetPrefs  = 20 // shown untrimmed in the prompt, like the owner's
	maxFacetGroups = 50
)

// Facet is what the agent learnt about a person in one scope.
type Facet struct {
	Notes       []string          `json:"notes,omitempty"`
	Preferences map[string]string `json:"preferences,omitempty"`
}

func (f Facet) empty() bool { return len(f.Notes) == 0 && len(f.Preferences) == 0 }

func (f Facet) clone() Facet {
	f.Notes = slices.Clone(f.Notes)
	f.Preferences = maps.Clone(f.Preferences)
	return f
}

// Facet returns what was learnt about the person in a scope: group "" is
// the private conversation with them.
func (n *Npub) Facet(group string) Facet {
	if group == "" {
		if n.Private == nil {
			return Facet{}
		}
		return n.Private.clone()
	}
	return n.Groups[group].clone()
}

// facetLocked returns the facet of scope group ("" private) for writing,
// creating it; nil when the person already has maxFacetGroups groups.
func (n *Npub) facetLocked(group string) *Facet {
	if group == "" {
		if n.Private == nil {
			n.Private = &Facet{}
		}
		return n.Private
	}
	if n.Groups == nil {
		n.Groups = map[string]Facet{}
	}
	if _, ok := n.Groups[group]; !ok && len(n.Groups) >= maxFacetGroups {
		return nil
	}
	f := n.Groups[group]
	return &f
}

// putFacetLocked writes back a facet facetLocked returned (groups hold
// values), dropping it when it became empty.
func (n *Npub) putFacetLocked(group string, f *Facet) {
	if group == "" {
		if f.empty() {
			n.Private = nil
		}
		return
	}
	if f.empty() {
		delete(n.Groups, group)
	} else {
		n.Groups[group] = *f
	}
	if len(n.Groups) == 0 {
		n.Groups = nil
	}
}

// LearnNote adds a note learnt about a person in a scope (group "" is the
// private conversation with them), replacing the note replaces when it is
// set and found: a new version of a fact does not leave the old one in the
// record. It reports whether the record changed. Only an existing record
// is written: learning talks about people the agent has seen.
func (s *Store) LearnNote(pk, group, note, replaces string) bool {
	note = strings.TrimSpace(note)
	if Normalize(note) == "" {
		return false
	}
	return s.editFacet(pk, group, func(f *Facet) bool {
		changed := false
		if replaces != "" {
			old := Normalize(replaces)
			n := len(f.Notes)
			f.Notes = slices.DeleteFunc(f.Notes, func(x string) bool { return Normalize(x) == old })
			changed = len(f.Notes) != n
		}
		if containsNormalized(f.Notes, note) {
			return changed
		}
		f.Notes = capOldest(append(f.Notes, truncate(note, maxTextBytes)), maxNotes)
		return true
	})
}

// LearnPref sets a preference learnt about a person in a scope (group ""
// private). A new key is refused once the facet holds maxFacetPrefs.
func (s *Store) LearnPref(pk, group, key, value string) bool {
	key, value = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(value)
	if key == "" || value == "" || strings.HasPrefix(key, "snowclaw.") {
		return false // the agent's own bookkeeping keys are not learnt
	}
	return s.editFacet(pk, group, func(f *Facet) bool {
		old, had := f.Preferences[key]
		switch {
		case had && old == value:
			return false
		case !had && len(f.Preferences) >= maxFacetPrefs:
			return false
		}
		if f.Preferences == nil {
			f.Preferences = map[string]string{}
		}
		f.Preferences[key] = truncate(value, maxTextBytes)
		return true
	})
}

// ForgetFacet removes what was learnt about a person in a scope (group ""
// private) and reports whether there was anything.
func (s *Store) ForgetFacet(pk, group string) bool {
	return s.editFacet(pk, group, func(f *Facet) bool {
		had := !f.empty()
		*f = Facet{}
		return had
	})
}

func (s *Store) editFacet(pk, group string, edit func(*Facet) bool) bool {
	pk, err := snowclaw.ParsePubkey(pk)
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.npubs[pk]
	if !ok {
		return false
	}
	f := n.facetLocked(group)
	if f == nil || !edit(f) {
		if f != nil {
			n.putFacetLocked(group, f)
		}
		return false
	}
	n.putFacetLocked(group, f)
	s.markDirtyLocked(keyOf(KindNpub, pk, ""))
	return true
}

// dropGroupFacetsLocked removes every person's facet of a deleted group.
func (s *Store) dropGroupFacetsLocked(group string) {
	for pk, n := range s.npubs {
		if _, ok := n.Groups[group]; ok {
			delete(n.Groups, group)
			if len(n.Groups) == 0 {
				n.Groups = nil
			}
			s.markDirtyLocked(keyOf(KindNpub, pk, ""))
		}
	}
}

// facetScopes are the scopes the person has facets in: "" for private,
// then the groups in order.
func (n *Npub) facetScopes() []string {
	var out []string
	if n.Private != nil {
		out = append(out, "")
	}
	gs := slices.Sorted(maps.Keys(n.Groups))
	return append(out, gs...)
}

// ForgetLearntPref removes a learnt preference from every facet of a
// person (the owner's `--pref key=`: the key is forgotten everywhere) and
// reports whether one went.
func (s *Store) ForgetLearntPref(pk, key string) bool {
	key = strings.ToLower(strings.TrimSpace(key))
	pk, err := snowclaw.ParsePubkey(pk)
	if err != nil || key == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.npubs[pk]
	if !ok {
		return false
	}
	gone := false
	for _, g := range n.facetScopes() {
		f := n.facetLocked(g)
		if _, had := f.Preferences[key]; had {
			delete(f.Preferences, key)
			gone = true
		}
		n.putFacetLocked(g, f)
	}
	if gone {
		s.markDirtyLocked(keyOf(KindNpub, pk, ""))
	}
	return gone
}

// UnlearnNote removes a learnt note from a person's facet of a scope
// (group "" private): its memory was archived or forgotten.
func (s *Store) UnlearnNote(pk, group, note string) bool {
	n := Normalize(note)
	return s.editFacet(pk, group, func(f *Facet) bool {
		k := len(f.Notes)
		f.Notes = slices.DeleteFunc(f.Notes, func(x string) bool { return Normalize(x) == n })
		return len(f.Notes) != k
	})
}

// PrefKey is the key a learnt preference is filed under: its first topic,
// when it is a short one and not one of the agent's bookkeeping keys.
func PrefKey(topics []string) string {
	if len(topics) == 0 {
		return ""
	}
	k := strings.ToLower(strings.TrimSpace(topics[0]))
	if k == "" || len(k) > 40 || strings.HasPrefix(k, "snowclaw.") {
		return ""
	}
	return k
}
