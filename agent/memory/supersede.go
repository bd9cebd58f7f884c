package memory

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoItem: no item has the given id.
var ErrNoItem = errors.New("memory: no such item")

// Replace puts next in the place of the item oldID: a correction of its
// text or a move to a wider tier (docs/privacy.md#rectify-and-promote).
// The old item leaves RAM but nothing is queued for deletion: its event
// stays on the relay as the superseded version, and the new event names it
// in snow:supersedes (the caller sets next.Supersedes to its event id).
//
// next keeps the old item's provenance unless it sets its own; its ID is
// derived from its own text and scope, its topic from the old topic (or the
// default topic of its tier when the tier changed, so a private topic
// naming the person does not follow the memory into a group). It is an
// error when next would be the old item again or collide with another.
func (s *Store) Replace(oldID string, next Item) (Item, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.items[oldID]
	if !ok {
		return Item{}, fmt.Errorf("%w: %s", ErrNoItem, oldID)
	}
	if next.Tier == "" {
		next.Tier = old.Tier
	}
	if next.Tier == old.Tier && next.Topic == "" {
		next.Topic = strings.TrimSuffix(old.Topic, "/"+old.ID)
	}
	if next.Tier == old.Tier && next.Group == "" {
		next.Group = old.Group
	}
	fill := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	fill(&next.Detail, old.Detail)
	fill(&next.Context, old.Context)
	fill(&next.Source, old.Source)
	fill(&next.Subject, old.Subject)
	fill(&next.Author, old.Author)
	if next.Confidence <= 0 {
		next.Confidence = old.Confidence
	}
	next.ID, next.CreatedAt, next.UpdatedAt, next.Hits = "", 0, 0, old.Hits
	next.Version = max(old.Version, 1) + 1
	prepared, ok := s.prepareLocked(next)
	if !ok {
		why := next.Valid()
		if why == nil {
			why = errors.New("its person is not a valid key, or the owner ruled on its topic")
		}
		return Item{}, fmt.Errorf("memory: the new version cannot be stored: %w", why)
	}
	if prepared.ID == oldID {
		return Item{}, errors.New("memory: the new version says the same as the old one")
	}
	if _, taken := s.items[prepared.ID]; taken {
		return Item{}, fmt.Errorf("memory: the new version is already stored as item %s", prepared.ID)
	}
	s.dropItemLocked(oldID)
	s.items[prepared.ID] = &prepared
	s.markDirtyLocked(keyOf(KindItem, prepared.ID, prepared.Topic))
	return prepared, nil
}

// Merge folds duplicates into the item keepID: their events (events, in
// the order of drop) are named in its Merges, so its next write hides
// them from search and from the next start while they stay on the relay
// as history; they leave RAM now, with nothing queued for deletion. The
// kept item takes the highest confidence and source and the sum of hits.
func (s *Store) Merge(keepID string, drop []string, events []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	keep, ok := s.items[keepID]
	if !ok {
		return fmt.Errorf("%w: %s", ErrNoItem, keepID)
	}
	for i, id := range drop {
		d, ok := s.items[id]
		if !ok || id == keepID || i >= len(events) {
			continue
		}
		keep.Hits += d.Hits
		keep.Confidence = max(keep.Confidence, d.Confidence)
		if sourceRank(d.Source) > sourceRank(keep.Source) {
			keep.Source = d.Source
		}
		keep.Merges = append(keep.Merges, events[i])
		s.dropItemLocked(id)
	}
	keep.UpdatedAt = max(keep.UpdatedAt, s.now())
	s.markDirtyLocked(keyOf(KindItem, keep.ID, keep.Topic))
	return nil
}
