package memory

import (
	"slices"

	"github.com/snowclaw/snowclaw"
)

// The operations here serve a person's rights (docs/privacy.md): forgetting
// parts of what is known about them and erasing them entirely. Unlike
// Forget and DropNpub they leave nothing in Removed: whoever erases
// hard-deletes the events itself, and a NIP-09 request naming the
// person's records would be one more event about them.

// Erase removes the matching items without queueing deletions and
// returns them.
func (s *Store) Erase(match func(Item) bool) []Item {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Item
	for id, it := range s.items {
		if match(*it) {
			out = append(out, *it)
			s.dropItemLocked(id)
		}
	}
	sortNewest(out)
	return out
}

// ErasePerson removes a person's record and their membership in every
// group record (those are rewritten, so they are marked dirty). It
// reports whether there was a record.
func (s *Store) ErasePerson(pk string) bool {
	pk, err := snowclaw.ParsePubkey(pk)
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, had := s.npubs[pk]
	delete(s.npubs, pk)
	r := ref{KindNpub, pk}
	delete(s.dirty, r)
	delete(s.stamps, r)
	npub := snowclaw.NpubOf(pk)
	for id, g := range s.groups {
		n := len(g.Members)
		g.Members = slices.DeleteFunc(g.Members, func(m Member) bool { return m.Npub == npub })
		if len(g.Members) != n {
			s.markDirtyLocked(keyOf(KindGroup, id, ""))
		}
	}
	return had
}

// RemoveNotes drops a person's notes (the agent's and the owner's) that
// match, marking the record dirty; it returns how many went.
func (s *Store) RemoveNotes(pk string, match func(string) bool) int {
	pk, err := snowclaw.ParsePubkey(pk)
	if err != nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.npubs[pk]
	if !ok {
		return 0
	}
	before := len(n.Notes) + len(n.OwnerNotes)
	n.Notes = slices.DeleteFunc(n.Notes, match)
	n.OwnerNotes = slices.DeleteFunc(n.OwnerNotes, match)
	gone := before - len(n.Notes) - len(n.OwnerNotes)
	// and what was learnt about them, in every scope
	for _, g := range n.facetScopes() {
		f := n.facetLocked(g)
		k := len(f.Notes)
		f.Notes = slices.DeleteFunc(f.Notes, match)
		gone += k - len(f.Notes)
		n.putFacetLocked(g, f)
	}
	if gone > 0 {
		s.markDirtyLocked(keyOf(KindNpub, pk, ""))
	}
	return gone
}

// Remove drops the buffered messages that match and returns how many.
func (r *Ring) Remove(match func(HistoryMessage) bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	msgs := r.messagesLocked()
	kept := slices.DeleteFunc(slices.Clone(msgs), match)
	if len(kept) == len(msgs) {
		return 0
	}
	clear(r.buf)
	copy(r.buf, kept)
	r.start, r.n = 0, len(kept)
	return len(msgs) - len(kept)
}

// dropItemLocked takes an item out of RAM and out of the pending writes,
// without queueing a deletion of its event: the caller has its own plan
// for the event (hard delete, or keeping it as a superseded version).
func (s *Store) dropItemLocked(id string) {
	delete(s.items, id)
	r := ref{KindItem, id}
	delete(s.dirty, r)
	delete(s.stamps, r)
}
