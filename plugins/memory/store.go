package memory

import (
	"context"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	agentmem "github.com/snowclaw/snowclaw/agent/memory"
	"github.com/snowclaw/snowclaw/plugins/rights"
)

// Store stores a memory for reader. A signed event goes through the
// relay's write path as a websocket EVENT would, so every write rule
// holds; text is written by the agent on reader's behalf, in a tier reader
// may write to (see StoreRequest), and is on the relay when this returns.
// Every check that can refuse runs first (checkStore), so a refusal is
// counted once: here, or by the write path.
func (s *Service) Store(ctx context.Context, reader string, req snowclaw.StoreRequest) (snowclaw.MemoryView, error) {
	tier, err := s.checkStore(reader, req)
	if err != nil {
		if s.o.Refused != nil {
			s.o.Refused(err)
		}
		return snowclaw.MemoryView{}, err
	}
	if req.Event != nil {
		if err := s.o.Publish(ctx, req.Event); err != nil {
			return snowclaw.MemoryView{}, err
		}
		return s.viewerFor(reader).view(req.Event), nil
	}
	return s.storeText(ctx, reader, req, tier)
}

// checkStore refuses what reader may not store; for a text memory it
// also names the tier it goes to.
func (s *Service) checkStore(reader string, req snowclaw.StoreRequest) (snowclaw.Tier, error) {
	if reader == "" {
		return "", snowclaw.AuthRequired("storing a memory needs an authenticated key")
	}
	if s.o.Agent != nil && s.o.Agent.Frozen(reader) {
		return "", snowclaw.Restricted("your memory is frozen; unfreeze it before storing new memories")
	}
	// before the agent takes a text into its memory it could not store
	if s.o.DiskCheck != nil {
		if err := s.o.DiskCheck(); err != nil {
			return "", err
		}
	}
	if req.Event != nil {
		return "", checkEvent(reader, req.Event)
	}
	return s.checkText(reader, req)
}

func checkEvent(reader string, evt *nostr.Event) error {
	switch {
	case evt.Kind != snowclaw.KindAppData:
		return snowclaw.Invalid("a memory is a kind %d event, not kind %d", snowclaw.KindAppData, evt.Kind)
	case !snowclaw.ReadEvent(evt).IsMemoryItem():
		return snowclaw.Invalid("a memory's d tag starts with %s", snowclaw.PrefixMemoryItem)
	case evt.PubKey != reader:
		return snowclaw.Restricted("the event must be signed by the key that authenticated the request")
	case !evt.CheckID():
		return snowclaw.Invalid("event id is not the hash of its content")
	}
	if ok, err := evt.CheckSignature(); err != nil || !ok {
		return snowclaw.Invalid("signature does not verify")
	}
	return nil
}

// checkText decides the tier of a text memory. The tier decides who may
// ask: private (the default) is the caller's own, group needs
// membership, public and internal are the owner's.
func (s *Service) checkText(reader string, req snowclaw.StoreRequest) (snowclaw.Tier, error) {
	if s.o.Agent == nil {
		return "", snowclaw.Unsupported("the agent is off on this relay; send a signed event instead")
	}
	if strings.TrimSpace(req.Text) == "" {
		return "", snowclaw.Invalid("send text, or a signed event")
	}
	if len(req.Tags) > 0 {
		// the agent's items carry the first segment of their topic as
		// their only t tag; dropping the caller's tags silently would lose
		// what they asked for
		return "", snowclaw.Invalid("tags are kept only on signed events; for a text memory name a topic (its first segment becomes the t tag)")
	}
	if req.Confidence < 0 || req.Confidence > 1 {
		return "", snowclaw.Invalid("confidence is between 0 and 1")
	}
	tier := req.Tier
	if tier == "" {
		tier = snowclaw.TierPrivate
	}
	owner := s.ids.Owner != "" && reader == s.ids.Owner
	switch tier {
	case snowclaw.TierPrivate:
	case snowclaw.TierGroup:
		if req.Group == "" {
			return "", snowclaw.Invalid("a group memory names its group")
		}
		if !s.o.Groups.IsMember(req.Group, reader) {
			return "", snowclaw.Restricted("you are not a member of group %s", req.Group)
		}
	case snowclaw.TierPublic, snowclaw.TierInternal:
		if !owner {
			return "", snowclaw.Restricted("only the relay's owner may have the agent store %s memories", tier)
		}
	default:
		return "", snowclaw.Invalid("tier %q: want private, group, public or internal", tier)
	}
	if tier != snowclaw.TierGroup && req.Group != "" {
		return "", snowclaw.Invalid("group is set but the tier is %s", tier)
	}
	return tier, nil
}

// storeText has the agent write a text memory checkText allowed.
func (s *Service) storeText(ctx context.Context, reader string, req snowclaw.StoreRequest, tier snowclaw.Tier) (snowclaw.MemoryView, error) {
	source := agentmem.SourceExplicit
	if s.ids.Owner != "" && reader == s.ids.Owner {
		source = agentmem.SourceOwner
	}
	it, err := s.o.Agent.StoreItem(ctx, agentmem.Item{
		Text: req.Text, Detail: req.Detail, Topic: strings.Trim(strings.TrimPrefix(req.Topic, snowclaw.PrefixMemoryItem), "/"),
		Source: source, Tier: tier, Group: req.Group, Subject: reader, Author: reader, Confidence: req.Confidence,
	})
	if err != nil {
		return snowclaw.MemoryView{}, err
	}
	evt, err := s.agentItemEvent(ctx, it)
	if err != nil {
		return snowclaw.MemoryView{}, err
	}
	return s.viewerFor(reader).view(evt), nil
}

// agentItemEvent finds the stored event of an agent item just flushed.
func (s *Service) agentItemEvent(ctx context.Context, it agentmem.Item) (*nostr.Event, error) {
	d := snowclaw.PrefixMemoryItem + it.Topic
	ch, err := s.o.Store.QueryEvents(ctx, nostr.Filter{Kinds: []int{snowclaw.KindAppData}, Authors: []string{s.ids.Agent}, Tags: nostr.TagMap{"d": {d}}, Limit: 1})
	if err != nil {
		return nil, snowclaw.StoreFailed(err, "reading the stored memory")
	}
	var evt *nostr.Event
	for e := range ch {
		if evt == nil || e.CreatedAt > evt.CreatedAt {
			evt = e
		}
	}
	if evt == nil {
		return nil, snowclaw.Internal("the agent kept the memory but its event is not on the relay yet")
	}
	return evt, nil
}

// Forget hard-deletes one memory through the rights service (store,
// index, agent RAM, erasure list, audit). Its person, its author and the
// owner may; anyone else who can read it is refused, and who cannot read
// it hears not-found.
func (s *Service) Forget(ctx context.Context, reader, id string) (snowclaw.ForgetResponse, error) {
	if reader == "" {
		return snowclaw.ForgetResponse{}, snowclaw.AuthRequired("forgetting a memory needs an authenticated key")
	}
	id = strings.ToLower(strings.TrimSpace(id))
	if !isEventID(id) {
		return snowclaw.ForgetResponse{}, snowclaw.Invalid("%q is not an event id (64 hex characters)", id)
	}
	ch, err := s.o.Store.QueryEvents(ctx, nostr.Filter{IDs: []string{id}, Limit: 1})
	if err != nil {
		return snowclaw.ForgetResponse{}, snowclaw.StoreFailed(err, "reading the store")
	}
	var evt *nostr.Event
	for e := range ch {
		evt = e
	}
	if evt == nil || !snowclaw.ReadEvent(evt).IsMemoryItem() || !s.o.CanRead(reader, evt) {
		return snowclaw.ForgetResponse{}, errNotFound
	}
	subject, ok := s.forgetSubject(reader, evt)
	if !ok {
		return snowclaw.ForgetResponse{}, snowclaw.Restricted("a memory is forgotten by its person, its author or the relay's owner")
	}
	res, err := s.o.Rights.Forget(ctx, rights.Request{Actor: reader, Via: "http", Subject: subject}, rights.Selector{IDs: []string{id}}, "")
	if err != nil {
		return snowclaw.ForgetResponse{}, err
	}
	if res.Deleted == 0 {
		return snowclaw.ForgetResponse{}, snowclaw.Internal("the memory was found but could not be removed; try again")
	}
	return snowclaw.ForgetResponse{Deleted: res.Deleted, Message: res.Message}, nil
}

// forgetSubject names the person the rights service acts for, and whether
// reader may forget evt at all. The service finds a memory among its
// subject's holdings: what they wrote, the agent's memories addressed to
// them (p tag) and the agent's items about them.
func (s *Service) forgetSubject(reader string, raw *nostr.Event) (string, bool) {
	evt := snowclaw.ReadEvent(raw)
	person := ""
	if evt.PubKey == s.ids.Agent {
		if p, ok := evt.Person(s.ids.Agent); ok {
			person = p
		} else if c, err := agentmem.NewCodec(s.o.AgentSecret); err == nil {
			// a group item about someone, or a group lesson of their
			// words, names them inside its content
			if rec, err := c.Decode(evt); err == nil && rec.Item != nil {
				person = rec.Item.Subject
			} else if err == nil && rec.Lesson != nil {
				person = rec.Lesson.Subject
			}
		}
	}
	switch {
	case reader == evt.PubKey:
		return reader, true
	case person != "" && reader == person:
		return reader, true
	case s.ids.Owner != "" && reader == s.ids.Owner:
		if person != "" {
			return person, true
		}
		return evt.PubKey, true
	}
	return "", false
}
