package memory

import (
	"slices"
	"strings"

	"github.com/snowclaw/snowclaw"
)

// Group returns a copy of a group's record.
func (s *Store) Group(id string) (Group, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g, ok := s.groups[id]; ok {
		return g.clone(), true
	}
	return Group{}, false
}

// TouchGroup records activity in a group (at 0 means now), creating the
// record on first sight. As with TouchNpub, only creation marks it dirty.
// It returns nothing: the agent calls it for every group message, and a
// copy of the record (its decisions, members and themes) was most of its
// cost.
func (s *Store) TouchGroup(id string, at int64) {
	if id == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groupLocked(id)
	if at == 0 {
		at = s.now()
	}
	g.LastActivity = max(g.LastActivity, at)
}

func (s *Store) groupLocked(id string) *Group {
	if g, ok := s.groups[id]; ok {
		return g
	}
	g := &Group{ID: id, LastActivity: s.now()}
	s.groups[id] = g
	s.markDirtyLocked(keyOf(KindGroup, id, ""))
	return g
}

// SetGroupInfo sets a group's name and purpose (from NIP-29 metadata or the
// owner). Empty arguments leave the field as it is, so a metadata event
// without an about does not wipe a purpose the owner gave.
func (s *Store) SetGroupInfo(id, name, purpose string) bool {
	name, purpose = strings.TrimSpace(name), strings.TrimSpace(purpose)
	if id == "" || name == "" && purpose == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groupLocked(id)
	changed := false
	if name != "" && name != g.Name {
		g.Name, changed = name, true
	}
	if purpose != "" && purpose != g.Purpose {
		g.Purpose, changed = purpose, true
	}
	if changed {
		s.markDirtyLocked(keyOf(KindGroup, id, ""))
	}
	return changed
}

// SeeMember records a member of a group (npub or hex) and their current
// name; it reports whether the member or the name is new.
func (s *Store) SeeMember(id, npub, name string) bool {
	npub, name = snowclaw.NpubOf(strings.TrimSpace(npub)), strings.TrimSpace(name)
	if id == "" || npub == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groupLocked(id)
	i := slices.IndexFunc(g.Members, func(m Member) bool { return m.Npub == npub })
	switch {
	case i < 0:
		g.Members = capOldest(append(g.Members, Member{Npub: npub, Name: name}), maxMembers)
	case name != "" && g.Members[i].Name != name:
		g.Members[i].Name = name
	default:
		return false
	}
	s.markDirtyLocked(keyOf(KindGroup, id, ""))
	return true
}

// AddTheme adds a discussion theme unless the group has it already.
func (s *Store) AddTheme(id, theme string) bool {
	theme = strings.TrimSpace(theme)
	if id == "" || normalizesEmpty(theme) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groupLocked(id)
	if containsNormalized(g.Themes, theme) {
		return false
	}
	g.Themes = capOldest(append(g.Themes, theme), maxThemes)
	s.markDirtyLocked(keyOf(KindGroup, id, ""))
	return true
}

// AddDecision records a decision (at 0 means now) unless the group already
// has the same one.
func (s *Store) AddDecision(id, text string, at int64) bool {
	text = strings.TrimSpace(text)
	if id == "" || normalizesEmpty(text) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groupLocked(id)
	if slices.ContainsFunc(g.Decisions, func(d Decision) bool { return SameNormalized(d.Text, text) }) {
		return false
	}
	if at == 0 {
		at = s.now()
	}
	g.Decisions = capOldest(append(g.Decisions, Decision{Text: text, At: at}), maxDecisions)
	s.markDirtyLocked(keyOf(KindGroup, id, ""))
	return true
}

// Groups returns copies of every group's record, ordered by id.
func (s *Store) Groups() []Group {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Group, 0, len(s.groups))
	for _, g := range s.groups {
		out = append(out, g.clone())
	}
	slices.SortFunc(out, func(a, b Group) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// DropGroup removes a group's record (not its items) and queues its
// deletion.
func (s *Store) DropGroup(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.groups[id]; !ok {
		return false
	}
	delete(s.groups, id)
	s.markRemovedLocked(keyOf(KindGroup, id, ""))
	return true
}
