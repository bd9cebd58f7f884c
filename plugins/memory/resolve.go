package memory

import (
	"context"
	"slices"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/search"
)

// ResolveRequest is POST /api/v1/conflicts/resolve: either a winner, or
// a flag for human review (flag false takes the flag off).
type ResolveRequest struct {
	Topic  string   `json:"topic"`
	Winner string   `json:"winner,omitempty"`
	IDs    []string `json:"ids,omitempty"`
	Flag   *bool    `json:"flag,omitempty"`
}

// ResolveResult says what the agent published.
type ResolveResult struct {
	Topic      string               `json:"topic"`
	Memory     *snowclaw.MemoryView `json:"memory,omitempty"`     // the new memory (winner)
	Superseded []string             `json:"superseded,omitempty"` // ids it supersedes (winner)
	Flagged    bool                 `json:"flagged"`
	Labels     []string             `json:"labels,omitempty"` // label events published, or deleted to unflag
}

// ResolveConflict is the owner's decision on a conflict, carried out by
// the agent through the relay's write path (so every write rule holds):
// with a winner, a new memory that copies the winner and supersedes every
// memory of the conflict; with flag, a NIP-32 label marking it for review.
func (s *Service) ResolveConflict(ctx context.Context, actor string, rr ResolveRequest) (ResolveResult, error) {
	switch {
	case s.ids.Owner == "" || actor != s.ids.Owner:
		return ResolveResult{}, snowclaw.Restricted("only the relay's owner resolves conflicts")
	case s.o.Index == nil:
		return ResolveResult{}, snowclaw.Unsupported("search (NIP-50) is turned off on this relay, and conflicts are found by its index")
	}
	rr.Topic = strings.TrimPrefix(strings.TrimSpace(rr.Topic), snowclaw.PrefixMemoryItem)
	switch {
	case rr.Topic == "":
		return ResolveResult{}, snowclaw.Invalid("topic is required")
	case (rr.Winner != "") == (rr.Flag != nil):
		return ResolveResult{}, snowclaw.Invalid(`send either "winner" or "flag"`)
	}
	cs, err := s.o.Index.Conflicts(actor, rr.Topic)
	if err != nil {
		return ResolveResult{}, err
	}
	var conflict *search.Conflict
	for _, c := range cs {
		if c.Topic == rr.Topic {
			conflict = &c
		}
	}
	if conflict == nil {
		return ResolveResult{}, snowclaw.NotFound("no conflict on topic %s", rr.Topic)
	}
	// the versions a learnt memory replaced are the conflict's too: the
	// owner may pick one, and the ruling supersedes them all
	evs, err := s.conflictEvents(ctx, actor, rr.Topic, append(docIDs(conflict.Docs), docIDs(conflict.History)...))
	if err != nil {
		return ResolveResult{}, err
	}
	if rr.Flag != nil {
		return s.flagConflict(ctx, rr, evs)
	}
	return s.pickWinner(ctx, rr, evs)
}

// pickWinner publishes the winner's copy. The copy lives at the agent's
// address for the topic and keeps the winner's source, so ranking still
// credits whoever said it.
func (s *Service) pickWinner(ctx context.Context, rr ResolveRequest, evs []*nostr.Event) (ResolveResult, error) {
	winner := findEvent(evs, strings.ToLower(strings.TrimSpace(rr.Winner)))
	if winner == nil {
		return ResolveResult{}, snowclaw.Invalid("%s is not a memory of the conflict on %s", rr.Winner, rr.Topic)
	}
	w := snowclaw.ReadEvent(winner)
	if w.Encrypted {
		return ResolveResult{}, snowclaw.Invalid("the winner is an encrypted (private or internal) memory; only public and group memories can be copied as a resolution")
	}
	g := w.Group
	superseded := []string{winner.ID}
	for _, raw := range evs {
		if raw.ID == winner.ID {
			continue
		}
		// a group winner must not retire a memory more people could read:
		// they would lose it without seeing its replacement
		if e := snowclaw.ReadEvent(raw); g != "" && !e.Encrypted && e.Group != g {
			return ResolveResult{}, snowclaw.Invalid("the winner is readable in group %s only, but %s is readable more widely; promote the winner first", g, e.ID)
		}
		superseded = append(superseded, raw.ID)
	}
	evt, err := s.resolutionEvent(ctx, rr.Topic, w, superseded)
	if err != nil {
		return ResolveResult{}, err
	}
	if err := s.o.Publish(ctx, evt); err != nil {
		return ResolveResult{}, err
	}
	mv := s.viewerFor(s.ids.Owner).view(evt)
	s.log.Info("conflict resolved", "topic", rr.Topic, "winner", winner.ID, "memory", evt.ID, "superseded", len(superseded))
	return ResolveResult{Topic: rr.Topic, Memory: &mv, Superseded: superseded}, nil
}

// resolutionEvent builds and signs the agent's copy of the winner.
func (s *Service) resolutionEvent(ctx context.Context, topic string, winner *snowclaw.Event, superseded []string) (*nostr.Event, error) {
	d := snowclaw.PrefixMemoryItem + topic
	tags := nostr.Tags{{"d", d}}
	if g := winner.Group; g != "" {
		tags = append(tags, nostr.Tag{"h", g})
	}
	tags = append(tags, nostr.Tag{snowclaw.TagTier, string(winner.Tier)})
	for _, t := range snowclaw.TagValues(winner.Event, "t") {
		tags = append(tags, nostr.Tag{"t", t})
	}
	tags = append(tags, nostr.Tag{snowclaw.TagSource, snowclaw.NpubOf(firstTag(winner.Event, snowclaw.TagSource, winner.PubKey))})
	for _, key := range []string{snowclaw.TagModel, snowclaw.TagConfidence} {
		if v := firstTag(winner.Event, key, ""); v != "" {
			tags = append(tags, nostr.Tag{key, v})
		}
	}
	for _, id := range superseded {
		tags = append(tags, nostr.Tag{snowclaw.TagSupersedes, id})
	}
	// marks it as the owner's ruling, not one of the agent's own items:
	// the agent does not load it, so compaction can never delete it and
	// bring the losers back
	tags = append(tags, nostr.Tag{snowclaw.TagResolution, topic})
	// a new version must be newer than the agent's stored one at this
	// address, or the relay keeps the old one
	stamp := nostr.Now()
	ch, err := s.o.Store.QueryEvents(ctx, nostr.Filter{Kinds: []int{snowclaw.KindAppData}, Authors: []string{s.ids.Agent}, Tags: nostr.TagMap{"d": {d}}, Limit: 2})
	if err != nil {
		return nil, snowclaw.StoreFailed(err, "reading the agent's memory on %s", topic)
	}
	for prev := range ch {
		stamp = max(stamp, prev.CreatedAt+1)
	}
	evt := &nostr.Event{Kind: snowclaw.KindAppData, CreatedAt: stamp, Tags: tags, Content: winner.Content}
	if err := evt.Sign(s.o.AgentSecret); err != nil {
		return nil, snowclaw.Internal("signing with the agent key: %v", err)
	}
	return evt, nil
}

// flagConflict labels memories of the conflict as flagged (NIP-32), or
// deletes the agent's flags on it. A label carries the h tag of the group
// its memories are in, so it is read where they are; encrypted memories
// cannot be labelled without naming them in the clear.
func (s *Service) flagConflict(ctx context.Context, rr ResolveRequest, evs []*nostr.Event) (ResolveResult, error) {
	targets := evs
	if len(rr.IDs) > 0 {
		targets = nil
		for _, id := range rr.IDs {
			e := findEvent(evs, strings.ToLower(strings.TrimSpace(id)))
			if e == nil {
				return ResolveResult{}, snowclaw.Invalid("%s is not a memory of the conflict on %s", id, rr.Topic)
			}
			if snowclaw.ReadEvent(e).Encrypted {
				return ResolveResult{}, snowclaw.Invalid("%s is encrypted and cannot be flagged", id)
			}
			targets = append(targets, e)
		}
	}
	res := ResolveResult{Topic: rr.Topic, Flagged: *rr.Flag}
	if !*rr.Flag {
		labels, err := s.conflictLabels(ctx, eventIDs(evs))
		if err != nil || len(labels) == 0 {
			return res, err
		}
		del := nostr.Tags{}
		for _, l := range labels {
			del = append(del, nostr.Tag{"e", l.ID})
			res.Labels = append(res.Labels, l.ID)
		}
		return res, s.publishAsAgent(ctx, snowclaw.KindDeletion, del, "conflict flag removed by the owner")
	}
	byGroup := map[string][]string{}
	var groups []string
	for _, raw := range targets {
		e := snowclaw.ReadEvent(raw)
		if e.Encrypted {
			continue
		}
		g := e.Group
		if _, ok := byGroup[g]; !ok {
			groups = append(groups, g)
		}
		byGroup[g] = append(byGroup[g], e.ID)
	}
	if len(groups) == 0 {
		return ResolveResult{}, snowclaw.Invalid("no memory of this conflict can be flagged (all are encrypted)")
	}
	for _, g := range groups {
		tags := nostr.Tags{{"L", labelNamespace}, {"l", labelFlagged, labelNamespace}}
		for _, id := range byGroup[g] {
			tags = append(tags, nostr.Tag{"e", id})
		}
		if g != "" {
			tags = append(tags, nostr.Tag{"h", g})
		}
		evt, err := s.signAsAgent(kindLabel, tags, "conflicting memories on "+rr.Topic+": flagged for review")
		if err != nil {
			return ResolveResult{}, err
		}
		if err := s.o.Publish(ctx, evt); err != nil {
			return ResolveResult{}, err
		}
		res.Labels = append(res.Labels, evt.ID)
	}
	return res, nil
}

func (s *Service) signAsAgent(kind int, tags nostr.Tags, content string) (*nostr.Event, error) {
	evt := &nostr.Event{Kind: kind, CreatedAt: nostr.Now(), Tags: tags, Content: content}
	if err := evt.Sign(s.o.AgentSecret); err != nil {
		return nil, snowclaw.Internal("signing with the agent key: %v", err)
	}
	return evt, nil
}

func (s *Service) publishAsAgent(ctx context.Context, kind int, tags nostr.Tags, content string) error {
	evt, err := s.signAsAgent(kind, tags, content)
	if err != nil {
		return err
	}
	return s.o.Publish(ctx, evt)
}

func findEvent(evs []*nostr.Event, id string) *nostr.Event {
	i := slices.IndexFunc(evs, func(e *nostr.Event) bool { return e.ID == id })
	if i < 0 {
		return nil
	}
	return evs[i]
}

func docIDs(docs []search.Doc) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.ID
	}
	return out
}
