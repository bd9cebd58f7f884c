package memory

import (
	"context"
	"slices"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// The conflict dashboard (docs/api.md#get-apiv1conflictstopic): topics
// on which sources disagree, as the search index finds them, shown to each
// reader with only the memories that reader may read: current memories
// from different sources, and new versions of memories learnt from
// someone else than the version they replaced.

// NIP-32 label namespace and value the agent flags conflicts with.
const (
	labelNamespace = "snow.conflict"
	labelFlagged   = "flagged"
	kindLabel      = 1985
)

// ConflictView is one conflict as a reader sees it: memories in the order
// ranking prefers them (trust, then newest), the first being the one a
// search would put on top.
type ConflictView struct {
	Topic    string                `json:"topic"`
	Memories []snowclaw.MemoryView `json:"memories"`
	Flagged  bool                  `json:"flagged"`
	// ResolvedBySupersession: no current memories disagree, but the
	// current one is a new version of a memory learnt from someone else
	// The current memories come first; the versions they
	// replaced follow, each with superseded_by set: history, listed
	// until the owner rules.
	ResolvedBySupersession bool `json:"resolved_by_supersession,omitempty"`
}

// Conflicts lists the conflicts on topic ("" = every topic) among the
// memories reader may read; a conflict of which the reader sees fewer
// than two memories is no conflict to them.
func (s *Service) Conflicts(ctx context.Context, reader, topic string) ([]ConflictView, error) {
	if s.o.Index == nil {
		return nil, snowclaw.Unsupported("search (NIP-50) is turned off on this relay, and conflicts are found by its index")
	}
	topic = strings.TrimPrefix(strings.TrimSpace(topic), snowclaw.PrefixMemoryItem)
	cs, err := s.o.Index.Conflicts(reader, topic)
	if err != nil {
		return nil, err
	}
	out := []ConflictView{}
	v := s.viewerFor(reader)
	for _, c := range cs {
		evs, err := s.conflictEvents(ctx, reader, c.Topic, docIDs(c.Docs))
		if err != nil {
			return nil, err
		}
		old, err := s.conflictEvents(ctx, reader, c.Topic, docIDs(c.History))
		if err != nil {
			return nil, err
		}
		if len(evs) == 0 || len(evs)+len(old) < 2 {
			continue
		}
		cv := ConflictView{Topic: c.Topic, Memories: make([]snowclaw.MemoryView, 0, len(evs)+len(old)), ResolvedBySupersession: len(evs) == 1}
		for _, evt := range evs {
			cv.Memories = append(cv.Memories, v.view(evt))
		}
		for _, evt := range old {
			mv := v.view(evt)
			for _, cur := range evs {
				if by := snowclaw.TagValues(cur, snowclaw.TagSupersedes); len(by) > 0 && by[0] == evt.ID {
					mv.SupersededBy = append(mv.SupersededBy, cur.ID)
				}
			}
			cv.Memories = append(cv.Memories, mv)
		}
		evs = append(evs, old...)
		flagged, err := s.flagged(ctx, eventIDs(evs))
		if err != nil {
			return nil, err
		}
		cv.Flagged = len(flagged) > 0
		out = append(out, cv)
	}
	return out, nil
}

// conflictEvents loads the stored events of a conflict's docs in the
// given order, keeping those reader may read: the index judged
// visibility from its copy of the tags, the store has the real event.
func (s *Service) conflictEvents(ctx context.Context, reader, topic string, ids []string) ([]*nostr.Event, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	ch, err := s.o.Store.QueryEvents(ctx, nostr.Filter{IDs: ids, Limit: len(ids)})
	if err != nil {
		return nil, snowclaw.StoreFailed(err, "loading the memories of %s", topic)
	}
	byID := make(map[string]*nostr.Event, len(ids))
	for evt := range ch {
		byID[evt.ID] = evt
	}
	out := make([]*nostr.Event, 0, len(ids))
	for _, id := range ids {
		if evt, ok := byID[id]; ok && snowclaw.ReadEvent(evt).IsMemoryItem() && s.o.CanRead(reader, evt) {
			out = append(out, evt)
		}
	}
	return out, nil
}

// flagged returns those of ids that a standing agent label marks as
// flagged for review. Only the agent's labels count: anyone may publish a
// kind 1985, but only the owner's resolve call makes the agent sign one.
func (s *Service) flagged(ctx context.Context, ids []string) (map[string]bool, error) {
	labels, err := s.conflictLabels(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, l := range labels {
		for _, id := range snowclaw.TagValues(l, "e") {
			if slices.Contains(ids, id) {
				out[id] = true
			}
		}
	}
	return out, nil
}

// conflictLabels are the agent's snow.conflict flags naming any of ids.
func (s *Service) conflictLabels(ctx context.Context, ids []string) ([]*nostr.Event, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	ch, err := s.o.Store.QueryEvents(ctx, nostr.Filter{
		Kinds: []int{kindLabel}, Authors: []string{s.ids.Agent}, Tags: nostr.TagMap{"e": ids}, Limit: 500,
	})
	if err != nil {
		return nil, snowclaw.StoreFailed(err, "reading conflict flags")
	}
	var out []*nostr.Event
	for evt := range ch {
		if isConflictFlag(evt) {
			out = append(out, evt)
		}
	}
	return out, nil
}

func isConflictFlag(evt *nostr.Event) bool {
	ns := slices.Contains(snowclaw.TagValues(evt, "L"), labelNamespace)
	for _, t := range evt.Tags {
		if ns && len(t) >= 3 && t[0] == "l" && t[1] == labelFlagged && t[2] == labelNamespace {
			return true
		}
	}
	return false
}

func eventIDs(evs []*nostr.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}
