// Package session groups memories into the sessions they were written in.
// The memories one author stores close together in time were written
// together (an agent files what it learnt from one conversation as it
// goes or at its end; LoCoMo's turns published as memories carry their
// session's date plus their position), as the messages of a chat thread
// sit next to each other. Two memories of one author at most Window apart
// are in one session, and so is every memory chained to them that way: a
// session is a run of one author's memories with no gap longer than
// Window. A search lets a memory that matches lend part of its score to
// the others of its session, which is how a memory that answers a
// question without repeating its words ("take a look at this" next to "I
// painted that lake sunrise") can still be found. Unlike a thread, a
// session has no order: every member is as near as every other.
package session

import (
	"cmp"
	"slices"

	"github.com/snowclaw/snowclaw/search/speaker"
)

// MaxLend is the largest session whose members lend to each other. A
// conversation's session holds tens of memories; an author who stores
// thousands under one timestamp is not writing down a conversation, and
// lending across all of them would cost every search that touches one
// of them a walk over all the others.
const MaxLend = 200

// Window is the longest gap, in seconds, between two memories of one
// session. Chosen on the tuning half of the LoCoMo conversations
// (docs/search-tuning.md).
const Window = 30 * 60

// Of is the session key of a record (d tag d) by author, "" when it is no
// record (a chat message has a thread instead) or its text is not a turn
// of a conversation ("<Name>: …", search/speaker): plain facts stored in
// one burst (an import, a few notes) are not each other's context, and a
// search for one must not return the others. The key is the author's:
// which of the author's sessions a memory is in follows from its time
// (Set).
func Of(d, author, text string) string {
	return Key(d, author, speaker.Of(text))
}

// Key is Of for a record whose speaker (speaker.Of of its text) is known:
// the index keeps the speaker, not the text, in RAM.
func Key(d, author, spk string) string {
	if d == "" || spk == "" {
		return ""
	}
	return author
}

// Set is every author's memories in time order, so that a search asks
// which session a doc is in by its id instead of reading its text again
// (Key). Not safe for concurrent use: the index guards it with its own
// lock.
type Set struct {
	window int64
	byKey  map[string]map[int64][]entry // key → bucket (at / width) → members by (at, id)
	of     map[string]entry             // member id → its key and time
}

type entry struct {
	id, key string
	at      int64
}

func (e entry) cmp(o entry) int {
	if c := cmp.Compare(e.at, o.at); c != 0 {
		return c
	}
	return cmp.Compare(e.id, o.id)
}

// NewSet returns an empty set whose sessions break at gaps longer than
// window seconds (Window; 0: only equal times are one session).
func NewSet(window int64) *Set {
	return &Set{window: max(window, 0), byKey: make(map[string]map[int64][]entry), of: make(map[string]entry)}
}

// width is a bucket's span: members of one bucket are less than width
// apart, so one bucket is one session, and an empty bucket ends one.
func (s *Set) width() int64 { return max(s.window, 1) }

func (s *Set) bucket(at int64) int64 {
	b := at / s.width()
	if at < 0 && at%s.width() != 0 {
		b--
	}
	return b
}

// Add puts id, written at at, among key's memories; "" is no session. An
// id added again moves to its new key and time.
func (s *Set) Add(key, id string, at int64) {
	if key == "" {
		return
	}
	s.Remove(id)
	e := entry{id: id, key: key, at: at}
	bs := s.byKey[key]
	if bs == nil {
		bs = make(map[int64][]entry)
		s.byKey[key] = bs
	}
	b := s.bucket(at)
	i, _ := slices.BinarySearchFunc(bs[b], e, entry.cmp)
	bs[b] = slices.Insert(bs[b], i, e)
	s.of[id] = e
}

// Remove takes id out of its session; an unknown id changes nothing.
func (s *Set) Remove(id string) {
	e, ok := s.of[id]
	if !ok {
		return
	}
	delete(s.of, id)
	bs := s.byKey[e.key]
	b := s.bucket(e.at)
	if i, found := slices.BinarySearchFunc(bs[b], e, entry.cmp); found {
		bs[b] = slices.Delete(bs[b], i, i+1)
	}
	if len(bs[b]) == 0 {
		delete(bs, b)
	}
	if len(bs) == 0 {
		delete(s.byKey, e.key)
	}
}

// Key is the key id was added under, "" if none.
func (s *Set) Key(id string) string { return s.of[id].key }

// Lend adds share to out for every mate of id (Mates); a share of 0
// lends nothing.
func (s *Set) Lend(id string, share float64, readable func(string) bool, out map[string]float64) {
	if share != 0 {
		s.Mates(id, readable, func(m string) { out[m] += share })
	}
}

// Any tells whether some mate of id (Mates) is one for which ok holds.
func (s *Set) Any(id string, readable, ok func(string) bool) bool {
	found := false
	s.Mates(id, readable, func(m string) { found = found || ok(m) })
	return found
}

// Mates calls fn for every other member of id's session that readable
// admits, as long as the session is no larger than MaxLend. The walk
// stops at the first gap longer than the window on either side, or as
// soon as the session has grown past MaxLend, so it costs at most about
// MaxLend members whatever the author stored.
func (s *Set) Mates(id string, readable func(string) bool, fn func(mate string)) {
	self, ok := s.of[id]
	if !ok {
		return
	}
	bs := s.byKey[self.key]
	var mates []string
	// walk reports false when the session is too large to lend
	walk := func(step int64) bool {
		last := self.at
		for b := s.bucket(self.at); ; b += step {
			es := bs[b]
			if len(es) == 0 {
				return true // a bucket's span without a member is a gap longer than the window
			}
			if len(es) > MaxLend {
				return false
			}
			for k := range es {
				e := es[k]
				if step < 0 {
					e = es[len(es)-1-k]
				}
				if c := e.cmp(self); c == 0 || (c < 0) == (step > 0) {
					continue // self, or on the other side
				}
				gap := e.at - last
				if step < 0 {
					gap = last - e.at
				}
				if gap > s.window {
					return true
				}
				last = e.at
				if mates = append(mates, e.id); len(mates) >= MaxLend {
					return false
				}
			}
		}
	}
	if !walk(1) || !walk(-1) {
		return
	}
	for _, m := range mates {
		if readable(m) {
			fn(m)
		}
	}
}
