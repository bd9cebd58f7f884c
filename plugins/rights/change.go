package rights

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/memory"
)

// Change is the outcome of a rectify or a promotion: a new version that
// supersedes the old one, which stays on the relay as history (hidden
// from search) until the person forgets it too.
type Change struct {
	Old     string        `json:"old"` // event id of the superseded version
	New     string        `json:"new"` // event id of the new version
	Tier    snowclaw.Tier `json:"tier"`
	Group   string        `json:"group,omitempty"`
	Version int           `json:"version"`
	Text    string        `json:"text"`
	Message string        `json:"message"`
}

// Rectify corrects a stored fact about the person
// (docs/privacy.md#rectify-and-promote): ref names
// the memory (an event or item id, or words that match exactly one of
// their current memories) and text is what it should say.
func (s *Service) Rectify(ctx context.Context, r Request, ref, text string) (Change, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return Change{}, snowclaw.Invalid("say what the memory should say instead")
	}
	m, err := s.changeable(ctx, r, ref)
	if err != nil {
		return Change{}, err
	}
	next := memory.Item{Text: text, Tier: m.item.Tier, Source: s.sourceOf(r)}
	c, err := s.supersede(ctx, r, m, next, OpRectify, "")
	if err != nil {
		return c, err
	}
	c.Message = fmt.Sprintf("corrected: the memory now says %q (version %d); the old version %s is kept as history — forget it to remove it", c.Text, c.Version, short(c.Old))
	return c, nil
}

// Promote moves a memory about the person up one or two tiers (private →
// group → public; docs/privacy.md#rectify-and-promote), only ever on the command of the person or the
// owner. A group promotion names the group, and a person must belong to it.
func (s *Service) Promote(ctx context.Context, r Request, ref string, tier snowclaw.Tier, group string) (Change, error) {
	if tier != snowclaw.TierGroup && tier != snowclaw.TierPublic {
		return Change{}, snowclaw.Invalid("a memory is promoted to the group or the public tier, not %q", tier)
	}
	if tier == snowclaw.TierGroup {
		if group == "" {
			return Change{}, snowclaw.Invalid("name the group to share the memory with")
		}
		if s.o.HasGroup == nil || !s.o.HasGroup(group) {
			return Change{}, snowclaw.Restricted("group %q does not exist or you are not a member", group) // the same words as below: a hidden group must not show
		}
		if r.Actor != s.o.Owner && (s.o.IsMember == nil || !s.o.IsMember(group, r.Actor)) {
			return Change{}, snowclaw.Restricted("group %q does not exist or you are not a member", group)
		}
	} else {
		group = ""
	}
	m, err := s.changeable(ctx, r, ref)
	if err != nil {
		return Change{}, err
	}
	if m.item.Tier == snowclaw.TierInternal {
		return Change{}, snowclaw.Restricted("internal memories are the agent's own notes and are not promoted")
	}
	if tierRank(tier) <= tierRank(m.item.Tier) {
		return Change{}, snowclaw.Invalid("the memory is %s already; promotion only goes up (private → group → public)", m.item.Tier)
	}
	next := memory.Item{Text: m.item.Text, Tier: tier, Group: group}
	c, err := s.supersede(ctx, r, m, next, OpPromote, fmt.Sprintf("%s→%s", m.item.Tier, tier))
	if err != nil {
		return c, err
	}
	where := "everyone"
	if group != "" {
		where = "the members of group " + group
	}
	c.Message = fmt.Sprintf("promoted: the memory is now %s and readable by %s (new event %s, superseding %s)", tier, where, short(c.New), short(c.Old))
	return c, nil
}

// supersede has the agent write next over m and audits it.
func (s *Service) supersede(ctx context.Context, r Request, m held, next memory.Item, op, note string) (Change, error) {
	it, evt, err := s.o.Agent.Supersede(ctx, m.item.ID, m.evt.ID, next)
	if errors.Is(err, memory.ErrNoItem) {
		return Change{}, snowclaw.Invalid("that memory is an old version or no longer held by the agent; change its current version")
	}
	if err != nil {
		return Change{}, snowclaw.Internal("%v", err)
	}
	s.audit(r, op, SelectIDs, []string{m.evt.ID, evt.ID}, note)
	return Change{Old: m.evt.ID, New: evt.ID, Tier: it.Tier, Group: it.Group, Version: it.Version, Text: it.Text}, nil
}

// changeable finds the one current memory ref names among the person's,
// and checks that the agent wrote it: only the agent can sign its new
// version. A memory the person wrote with their own key they supersede
// themselves, from any client.
func (s *Service) changeable(ctx context.Context, r Request, ref string) (held, error) {
	if err := s.check(r); err != nil {
		return held{}, err
	}
	if s.o.Agent == nil {
		return held{}, snowclaw.Unsupported("the agent is off, so it holds no memories to change")
	}
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return held{}, snowclaw.Invalid("name the memory by its id or by words from it")
	}
	// what the agent holds but has not written yet would not be found
	if err := s.o.Agent.Flush(ctx); err != nil {
		return held{}, snowclaw.Internal("writing the agent's memory first: %v", err)
	}
	h, err := s.collect(ctx, r.Subject, false)
	if err != nil {
		return held{}, snowclaw.StoreFailed(err, "reading the store")
	}
	m, err := pick(current(h.memories), ref)
	if err != nil {
		return held{}, err
	}
	if m.evt.PubKey != s.agentPK || m.item == nil {
		if m.evt.PubKey == r.Subject {
			return held{}, snowclaw.Invalid("memory %s was written with your own key; publish its new version yourself with [\"snow:supersedes\", %q]", short(m.evt.ID), m.evt.ID)
		}
		return held{}, snowclaw.Restricted("memory %s was written by someone else; only its author can publish a new version", short(m.evt.ID))
	}
	return m, nil
}

// current drops the versions another held memory supersedes.
func current(ms []held) []held {
	gone := map[string]bool{}
	for _, m := range ms {
		for _, id := range snowclaw.TagValues(m.evt, snowclaw.TagSupersedes) {
			gone[id] = true
		}
	}
	out := ms[:0:0]
	for _, m := range ms {
		if !gone[m.evt.ID] {
			out = append(out, m)
		}
	}
	return out
}

// pick resolves ref: an id prefix (event or item, 8 hex digits at least)
// or words that must match exactly one memory.
func pick(ms []held, ref string) (held, error) {
	var found []held
	if isHexRef(ref) {
		for _, m := range ms {
			if strings.HasPrefix(m.evt.ID, ref) || m.item != nil && strings.HasPrefix(m.item.ID, ref) {
				found = append(found, m)
			}
		}
	}
	if len(found) == 0 {
		sel := Selector{Query: ref}
		for _, m := range ms {
			if sel.Match(m.evt, m.text) {
				found = append(found, m)
			}
		}
	}
	switch len(found) {
	case 0:
		return held{}, snowclaw.NotFound("none of your current memories matches %q", ref)
	case 1:
		return found[0], nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "invalid: %d memories match %q; name one by id:", len(found), ref)
	for _, m := range found {
		fmt.Fprintf(&b, " %s (%s);", short(m.evt.ID), clip(m.text, 60))
	}
	return held{}, errors.New(strings.TrimSuffix(b.String(), ";"))
}

func isHexRef(s string) bool {
	if len(s) < 8 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func tierRank(t snowclaw.Tier) int {
	switch t {
	case snowclaw.TierPrivate:
		return 0
	case snowclaw.TierGroup:
		return 1
	case snowclaw.TierPublic:
		return 2
	}
	return -1 // internal: the agent's own, never promoted from here
}

// sourceOf is the provenance of a correction: the owner's word, or the
// person's own.
func (s *Service) sourceOf(r Request) string {
	if r.Actor == s.o.Owner && r.Actor != r.Subject {
		return memory.SourceOwner
	}
	return memory.SourceExplicit
}

func short(id string) string { return id[:min(len(id), 8)] }

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
