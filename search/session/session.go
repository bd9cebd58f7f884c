// Package session groups memories into the sessions they were written in.
// The memories one author stores with one timestamp were written together
// (an agent files what it learnt from one conversation at once; LoCoMo's
// turns published as memories carry their session's date), as the
// messages of a chat thread sit next to each other. A search lets a memory
// that matches lend part of its score to the others of its session, which
// is how a memory that answers a question without repeating its words
// ("take a look at this" next to "I painted that lake sunrise") can still
// be found. Unlike a thread, a session has no order: every member is as
// near as every other.
package session

import (
	"strconv"

	"github.com/snowclaw/snowclaw/search/speaker"
)

// MaxLend is the largest session whose members lend to each other. A
// conversation's session holds tens of memories; an author who stores
// thousands under one timestamp is not writing down a conversation, and
// lending across all of them would cost every search that touches one
// of them a walk over all the others.
const MaxLend = 200

// Of is the session of a record (d tag d) by author written at createdAt,
// "" when it is no record (a chat message has a thread instead) or its
// text is not a turn of a conversation ("<Name>: …", search/speaker):
// plain facts stored in one burst (an import, a few notes) are not each
// other's context, and a search for one must not return the others.
func Of(d, author string, createdAt int64, text string) string {
	return Key(d, author, createdAt, speaker.Of(text))
}

// Key is Of for a record whose speaker (speaker.Of of its text) is known:
// the index keeps the speaker, not the text, in RAM.
func Key(d, author string, createdAt int64, spk string) string {
	if d == "" || spk == "" {
		return ""
	}
	return author + "@" + strconv.FormatInt(createdAt, 10)
}

// Set is the members of every session, and each member's session, so
// that a search asks which session a doc is in by its id instead of
// reading its text again (Key). Not safe for concurrent use: the index
// guards it with its own lock.
type Set struct {
	byKey map[string]*members
	keyOf map[string]string // member id → its session's key (shared with members.key)
}

type members struct {
	key string
	ids map[string]struct{}
}

// NewSet returns an empty set.
func NewSet() *Set {
	return &Set{byKey: make(map[string]*members), keyOf: make(map[string]string)}
}

// Add puts id into session key; "" is no session.
func (s *Set) Add(key, id string) {
	if key == "" {
		return
	}
	m := s.byKey[key]
	if m == nil {
		m = &members{key: key, ids: make(map[string]struct{})}
		s.byKey[key] = m
	}
	m.ids[id] = struct{}{}
	s.keyOf[id] = m.key
}

// Remove takes id out of session key.
func (s *Set) Remove(key, id string) {
	m := s.byKey[key]
	if m == nil {
		return
	}
	if _, ok := m.ids[id]; !ok {
		return
	}
	delete(m.ids, id)
	if s.keyOf[id] == key {
		delete(s.keyOf, id)
	}
	if len(m.ids) == 0 {
		delete(s.byKey, key)
	}
}

// Key is the session id was added to, "" if none.
func (s *Set) Key(id string) string { return s.keyOf[id] }

// Size is the number of members of session key.
func (s *Set) Size(key string) int {
	if m := s.byKey[key]; m != nil {
		return len(m.ids)
	}
	return 0
}

// Lend adds share to out for every mate of id (Mates); a share of 0
// lends nothing.
func (s *Set) Lend(key, id string, share float64, readable func(string) bool, out map[string]float64) {
	if share != 0 {
		s.Mates(key, id, readable, func(m string) { out[m] += share })
	}
}

// Any tells whether some mate of id (Mates) is one for which ok holds.
func (s *Set) Any(key, id string, readable, ok func(string) bool) bool {
	found := false
	s.Mates(key, id, readable, func(m string) { found = found || ok(m) })
	return found
}

// Mates calls fn for every other member of id's session key that readable
// admits, as long as the session is no larger than MaxLend.
func (s *Set) Mates(key, id string, readable func(string) bool, fn func(mate string)) {
	m := s.byKey[key]
	if key == "" || m == nil || len(m.ids) > MaxLend {
		return
	}
	for mate := range m.ids {
		if mate != id && readable(mate) {
			fn(mate)
		}
	}
}
