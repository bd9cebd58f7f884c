package memory

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/snowclaw/snowclaw"
)

// Remember stores a long-term memory and reports whether it is new.
//
// Missing fields are filled in: the tier (group when Group is set, private
// when Subject is, internal otherwise: never wider than the caller said),
// ID, Topic, Source, Confidence and timestamps. A given Topic gets "/<id>"
// appended unless it already ends in the id, because the topic is the d tag
// and items sharing one would replace each other on the relay.
//
// The same fact in the same scope (same ID) is merged instead: Hits goes
// up, UpdatedAt moves on, the longer Detail and the higher Source and
// Confidence are kept. Either way the item is dirty. When the store grows
// 10% past MaxItems it is compacted back to MaxItems (see Compact); what is
// dropped is reported through Removed.
//
// An item that cannot be placed (see Item.Valid) is not stored and the zero
// Item is returned.
func (s *Store) Remember(it Item) (Item, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.prepareLocked(it)
	if !ok {
		return Item{}, false
	}
	old, exists := s.items[it.ID]
	if exists {
		merged := *old
		merged.Hits++
		merged.UpdatedAt = max(old.UpdatedAt, it.UpdatedAt)
		merged.Text = it.Text
		merged.Detail = longer(old.Detail, it.Detail)
		merged.Context = longer(old.Context, it.Context)
		merged.Confidence = max(old.Confidence, it.Confidence)
		if sourceRank(it.Source) > sourceRank(old.Source) {
			merged.Source = it.Source
		}
		merged.Author = cmp.Or(old.Author, it.Author)
		merged.Subject = cmp.Or(old.Subject, it.Subject)
		it = merged
	}
	s.items[it.ID] = &it
	s.markDirtyLocked(keyOf(KindItem, it.ID, it.Topic))
	if limit := s.opts.MaxItems + max(s.opts.MaxItems/10, 1); len(s.items) > limit {
		s.compactLocked(s.opts.MaxItems)
	}
	return it, !exists
}

// ErrTopicTaken: RememberAt was given a topic an item already holds.
var ErrTopicTaken = errors.New("memory: an item already holds that topic")

// RememberAt stores a new item at exactly it.Topic, without the "/<id>"
// Remember appends: the agent's answer on another author's topic, so that
// both memories stand under one topic (the conflict dashboard's unit). The
// caller makes sure no event of the agent holds that d tag already; here
// an item of the store holding the topic, or the same fact already
// stored, is refused.
func (s *Store) RememberAt(it Item) (Item, error) {
	topic := strings.Trim(it.Topic, "/")
	if topic == "" {
		return Item{}, errors.New("memory: RememberAt needs a topic")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	it.Topic = ""
	it, ok := s.prepareLocked(it)
	if !ok {
		return Item{}, errors.New("memory: the item cannot be stored")
	}
	if _, exists := s.items[it.ID]; exists {
		return Item{}, fmt.Errorf("%w: the same memory is item %s", ErrTopicTaken, it.ID)
	}
	for _, x := range s.items {
		if x.Topic == topic {
			return Item{}, fmt.Errorf("%w: item %s", ErrTopicTaken, x.ID)
		}
	}
	if s.ruled[topic] {
		return Item{}, fmt.Errorf("%w: the owner's ruling", ErrTopicTaken)
	}
	it.Topic = topic
	s.items[it.ID] = &it
	s.markDirtyLocked(keyOf(KindItem, it.ID, it.Topic))
	return it, nil
}

// prepareLocked fills in an item's defaults and checks it can be stored.
func (s *Store) prepareLocked(it Item) (Item, bool) {
	it.Text = truncate(strings.TrimSpace(it.Text), maxTextBytes)
	it.Detail = truncate(strings.TrimSpace(it.Detail), maxDetailBytes)
	it.Context = truncate(strings.TrimSpace(it.Context), maxTextBytes)
	if it.Subject != "" {
		pk, err := snowclaw.ParsePubkey(it.Subject)
		if err != nil {
			return Item{}, false
		}
		it.Subject = pk
	}
	if pk, err := snowclaw.ParsePubkey(it.Author); err == nil {
		it.Author = pk
	}
	if it.Tier == "" {
		switch {
		case it.Group != "":
			it.Tier = snowclaw.TierGroup
		case it.Subject != "":
			it.Tier = snowclaw.TierPrivate
		default:
			it.Tier = snowclaw.TierInternal
		}
	}
	if it.Tier != snowclaw.TierGroup {
		it.Group = "" // an h tag would confuse who may read it
	}
	if it.Valid() != nil {
		return Item{}, false
	}
	if it.ID == "" {
		it.ID = ItemID(it.Tier, it.Scope(), it.Text)
	}
	switch {
	case it.Topic == "":
		it.Topic = DefaultTopic(it)
	case !strings.HasSuffix(it.Topic, "/"+it.ID) && it.Topic != it.ID:
		it.Topic = strings.Trim(it.Topic, "/") + "/" + it.ID
	}
	if s.ruled[it.Topic] {
		return Item{}, false // the owner's ruling holds its address
	}
	it.Source = cmp.Or(it.Source, SourceAgent)
	if it.Confidence <= 0 {
		it.Confidence = defaultConfidence(it.Source)
	}
	it.Confidence = min(it.Confidence, 1)
	now := s.now()
	it.CreatedAt = cmp.Or(it.CreatedAt, now)
	it.UpdatedAt = max(cmp.Or(it.UpdatedAt, now), it.CreatedAt)
	return it, true
}

func longer(a, b string) string {
	if len(b) > len(a) {
		return b
	}
	return a
}

// Forget removes every item match accepts and returns them, newest first;
// their keys go to Removed so the caller can delete their events. match runs
// under the store's lock and must not call the store.
func (s *Store) Forget(match func(Item) bool) []Item {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Item
	for id, it := range s.items {
		if match(*it) {
			out = append(out, *it)
			delete(s.items, id)
			s.markRemovedLocked(keyOf(KindItem, id, it.Topic))
		}
	}
	sortNewest(out)
	return out
}

// ForgetText serves "forget …": it removes the items of one tier and scope
// (group id; person as hex or npub) whose text contains the given words as
// whole words after Normalize. Matching whole words keeps "forget tea" from
// also removing "steam engines".
func (s *Store) ForgetText(scopeTier snowclaw.Tier, scope, text string) []Item {
	want := Normalize(text)
	if want == "" {
		return nil
	}
	if scopeTier == snowclaw.TierPrivate {
		if pk, err := snowclaw.ParsePubkey(scope); err == nil {
			scope = pk
		}
	}
	want = " " + want + " "
	return s.Forget(func(it Item) bool {
		return it.Tier == scopeTier && it.Scope() == scope &&
			strings.Contains(" "+Normalize(it.Text)+" ", want)
	})
}

// Items returns copies of every item, newest first.
func (s *Store) Items() []Item {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Item, 0, len(s.items))
	for _, it := range s.items {
		out = append(out, *it)
	}
	sortNewest(out)
	return out
}

// Item returns a copy of one item.
func (s *Store) Item(id string) (Item, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if it, ok := s.items[id]; ok {
		return *it, true
	}
	return Item{}, false
}

// Compact applies compaction (docs/agent.md#learning-when-told): duplicates (same tier, scope and
// normalized text, e.g. loaded from events written under other ids) keep
// only the newest, then only the limit newest items stay. It returns what it
// removed, which also goes to Removed. max <= 0 means Options.MaxItems.
func (s *Store) Compact(limit int) []Item {
	s.mu.Lock()
	defer s.mu.Unlock()
	if limit <= 0 {
		limit = s.opts.MaxItems
	}
	return s.compactLocked(limit)
}

func (s *Store) compactLocked(limit int) []Item {
	all := make([]Item, 0, len(s.items))
	for _, it := range s.items {
		all = append(all, *it)
	}
	sortNewest(all)
	seen := map[string]bool{}
	var removed []Item
	kept := 0
	for _, it := range all {
		// Scope is part of the key: the same words in two groups are two
		// memories, and dropping one would make it vanish from that group.
		k := string(it.Tier) + "|" + it.Scope() + "|" + Normalize(it.Text)
		if it.IsArchive() {
			continue // what it archived would come back (ArchiveTopic)
		}
		if seen[k] || kept >= limit {
			removed = append(removed, it)
			delete(s.items, it.ID)
			s.markRemovedLocked(keyOf(KindItem, it.ID, it.Topic))
			continue
		}
		seen[k] = true
		kept++
	}
	return removed
}

// sortNewest orders items by UpdatedAt, then CreatedAt, newest first, and
// by id for a stable order.
func sortNewest(items []Item) {
	slices.SortFunc(items, func(a, b Item) int {
		return cmp.Or(
			cmp.Compare(b.UpdatedAt, a.UpdatedAt),
			cmp.Compare(b.CreatedAt, a.CreatedAt),
			strings.Compare(a.ID, b.ID),
		)
	})
}
