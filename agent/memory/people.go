package memory

import (
	"slices"
	"strings"

	"github.com/snowclaw/snowclaw"
)

// Caps on the lists inside one record keep its event far below the relay's
// size limit; the oldest entries go first.
const (
	maxNames     = 20
	maxNotes     = 100
	maxMembers   = 500
	maxThemes    = 50
	maxDecisions = 100
)

// Npub returns a copy of a person's record. pk is hex or npub.
func (s *Store) Npub(pk string) (Npub, bool) {
	pk, err := snowclaw.ParsePubkey(pk)
	if err != nil {
		return Npub{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n, ok := s.npubs[pk]; ok {
		return n.clone(), true
	}
	return Npub{}, false
}

// TouchNpub records an interaction with a person (at 0 means now), creating
// the record on first sight. Only creation marks it dirty: LastInteraction
// changes on every message, and publishing an event per message would be
// pure churn, so it rides along with the record's next real change (or is
// lost on a crash, which costs little). An invalid pk returns the zero Npub.
func (s *Store) TouchNpub(pk string, at int64, group string) Npub {
	pk, err := snowclaw.ParsePubkey(pk)
	if err != nil {
		return Npub{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.npubLocked(pk, at, group)
	if at == 0 {
		at = s.now()
	}
	n.LastInteraction = max(n.LastInteraction, at)
	return n.clone()
}

// npubLocked returns the record of pk, creating (and dirtying) it if new.
func (s *Store) npubLocked(pk string, at int64, group string) *Npub {
	if n, ok := s.npubs[pk]; ok {
		return n
	}
	if at == 0 {
		at = s.now()
	}
	n := &Npub{
		Pubkey:          pk,
		FirstSeen:       at,
		FirstSeenGroup:  group,
		LastInteraction: at,
		Preferences:     map[string]string{},
		IsOwner:         pk == s.opts.Owner,
	}
	if cn, ok := s.names.take(pk); ok {
		n.DisplayNames = []DisplayName{{Name: cn.name, At: cn.at}}
	}
	s.npubs[pk] = n
	s.markDirtyLocked(keyOf(KindNpub, pk, ""))
	return n
}

// SeeName records the name a person currently goes by (from a kind 0
// profile) and reports whether their record changed. It never creates a
// record: a profile is not an interaction, and anyone can publish one from
// a fresh key. The name of someone without a record waits in a bounded RAM
// cache (Options.NameCache) and goes into their record when one is made.
func (s *Store) SeeName(pk, name string, at int64) bool {
	pk, err := snowclaw.ParsePubkey(pk)
	name = strings.TrimSpace(name)
	if err != nil || name == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.npubs[pk]
	if !ok {
		if at == 0 {
			at = s.now()
		}
		s.names.put(pk, name, at)
		return false
	}
	if k := len(n.DisplayNames); k > 0 && n.DisplayNames[k-1].Name == name {
		return false
	}
	if at == 0 {
		at = s.now()
	}
	n.DisplayNames = capOldest(append(n.DisplayNames, DisplayName{Name: name, At: at}), maxNames)
	s.markDirtyLocked(keyOf(KindNpub, pk, ""))
	return true
}

// AddNote adds a note about a person, to OwnerNotes when the owner wrote
// it. A note the person's record already holds (compared by Normalize) is
// not added again; an agent note repeating an owner note adds nothing.
func (s *Store) AddNote(pk, note string, owner bool) bool {
	pk, err := snowclaw.ParsePubkey(pk)
	note = strings.TrimSpace(note)
	if err != nil || Normalize(note) == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.npubLocked(pk, 0, "")
	if containsNormalized(n.OwnerNotes, note) || !owner && containsNormalized(n.Notes, note) {
		return false
	}
	if owner {
		n.OwnerNotes = capOldest(append(n.OwnerNotes, note), maxNotes)
	} else {
		n.Notes = capOldest(append(n.Notes, note), maxNotes)
	}
	s.markDirtyLocked(keyOf(KindNpub, pk, ""))
	return true
}

// SetPref sets a person's preference; an empty value deletes it. It reports
// whether anything changed.
func (s *Store) SetPref(pk, key, value string) bool {
	pk, err := snowclaw.ParsePubkey(pk)
	key, value = strings.TrimSpace(key), strings.TrimSpace(value)
	if err != nil || key == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.npubLocked(pk, 0, "")
	old, had := n.Preferences[key]
	switch {
	case value == "" && !had, value != "" && had && old == value:
		return false
	case value == "":
		delete(n.Preferences, key)
	default:
		if n.Preferences == nil {
			n.Preferences = map[string]string{}
		}
		n.Preferences[key] = value
	}
	s.markDirtyLocked(keyOf(KindNpub, pk, ""))
	return true
}

// FrozenPref is the preference of a person who asked that nothing new be
// remembered about them (docs/privacy.md, "restrict"). It lives in their
// record, so it survives restarts with it.
const FrozenPref = "snowclaw.frozen"

// Frozen reports whether pk's memory is frozen (FrozenPref).
func (s *Store) Frozen(pk string) bool {
	n, ok := s.Npub(pk)
	return ok && n.Preferences[FrozenPref] == "true"
}

// Npubs returns copies of every person's record, ordered by pubkey.
func (s *Store) Npubs() []Npub {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Npub, 0, len(s.npubs))
	for _, n := range s.npubs {
		out = append(out, n.clone())
	}
	slices.SortFunc(out, func(a, b Npub) int { return strings.Compare(a.Pubkey, b.Pubkey) })
	return out
}

// DropNpub removes a person's record (not the items about them, which have
// their own scope and are forgotten separately) and queues its deletion.
func (s *Store) DropNpub(pk string) bool {
	pk, err := snowclaw.ParsePubkey(pk)
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.npubs[pk]; !ok {
		return false
	}
	delete(s.npubs, pk)
	s.markRemovedLocked(keyOf(KindNpub, pk, ""))
	return true
}

// containsNormalized reports whether list holds s up to Normalize.
func containsNormalized(list []string, s string) bool {
	return slices.ContainsFunc(list, func(x string) bool { return SameNormalized(x, s) })
}

// capOldest drops the oldest (first) entries beyond limit.
func capOldest[T any](list []T, limit int) []T {
	if len(list) <= limit {
		return list
	}
	return slices.Clone(list[len(list)-limit:])
}
