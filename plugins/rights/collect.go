package rights

import (
	"cmp"
	"context"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent"
	"github.com/snowclaw/snowclaw/agent/memory"
	"github.com/snowclaw/snowclaw/agent/privmsg"
	"github.com/snowclaw/snowclaw/relay/store"
)

// held is one memory by or about the person, with the text they would
// read (decrypted when it is theirs to read).
type held struct {
	evt  *nostr.Event
	text string
	item *memory.Item // set when it is one of the agent's items
}

// holdings is what the service finds about a person.
type holdings struct {
	memories []held         // memory items by them or about them
	record   *nostr.Event   // the agent's snowclaw:memory:npub record
	others   []*nostr.Event // destroy only: their chat, profile, gift wraps to them, the agent's replies to them
}

// collect gathers the person's memories and record; with all, also every
// other event by or about them that a destroy removes.
func (s *Service) collect(ctx context.Context, pk string, all bool) (holdings, error) {
	var h holdings
	seen := map[string]bool{}
	add := func(evt *nostr.Event) {
		if seen[evt.ID] {
			return
		}
		seen[evt.ID] = true
		e := snowclaw.ReadEvent(evt)
		switch {
		case e.Namespace == snowclaw.NamespaceMemoryNpub && evt.PubKey == s.agentPK:
			h.record = evt
		case e.Namespace == snowclaw.NamespaceMemoryItem:
			h.memories = append(h.memories, s.read(e))
		case all && !snowclaw.IsGroupStateKind(evt.Kind) && !snowclaw.IsGroupMetadataKind(evt.Kind):
			h.others = append(h.others, evt)
		}
	}
	each := func(f nostr.Filter) error {
		return store.Each(ctx, s.o.Store, f, func(evt *nostr.Event) bool { add(evt); return true })
	}
	filters := []nostr.Filter{
		{Kinds: []int{snowclaw.KindAppData}, Authors: []string{pk}},
		{Kinds: []int{snowclaw.KindAppData}, Authors: []string{s.agentPK}, Tags: nostr.TagMap{"p": {pk}}},
	}
	if all {
		filters = append(filters,
			nostr.Filter{Authors: []string{pk}},
			nostr.Filter{Kinds: []int{snowclaw.KindGiftWrap}, Tags: nostr.TagMap{"p": {pk}}},
			nostr.Filter{Authors: []string{s.agentPK}, Tags: nostr.TagMap{"p": {pk}}},
		)
	}
	// items about them and lessons of their words kept in group tier
	// carry no p tag: find them by the d tags the agent knows
	if s.o.Agent != nil {
		var ds []string
		p := s.o.Agent.Person(pk)
		for _, it := range p.Items {
			ds = append(ds, agent.ItemD(it))
		}
		for _, l := range p.Lessons {
			ds = append(ds, agent.LessonD(l))
		}
		if len(ds) > 0 {
			filters = append(filters, nostr.Filter{Kinds: []int{snowclaw.KindAppData}, Authors: []string{s.agentPK}, Tags: nostr.TagMap{"d": ds}})
		}
	}
	for _, f := range filters {
		if err := each(f); err != nil {
			return h, err
		}
	}
	if all {
		// the person's private messages to the agent: gift wraps are
		// signed by one-time keys, so only opening them tells whose
		err := each2(ctx, s, nostr.Filter{Kinds: []int{snowclaw.KindGiftWrap}, Tags: nostr.TagMap{"p": {s.agentPK}}}, func(evt *nostr.Event) {
			if m, err := privmsg.Unwrap(ctx, evt, s.o.AgentSecret); err == nil && m.From == pk {
				add(evt)
			}
		})
		if err != nil {
			return h, err
		}
	}
	return h, nil
}

func each2(ctx context.Context, s *Service, f nostr.Filter, fn func(*nostr.Event)) error {
	return store.Each(ctx, s.o.Store, f, func(evt *nostr.Event) bool { fn(evt); return true })
}

// read decodes a memory event into the text its person would read: the
// agent's item or lesson, else the content as every view reads it
// (snowclaw.DecodeMemory), opened when the agent can open it.
func (s *Service) read(e *snowclaw.Event) held {
	evt := e.Event
	rec, err := s.codec.Decode(e)
	if err == nil && rec.Item != nil {
		return held{evt: evt, text: rec.Item.Text, item: rec.Item}
	}
	if err == nil && rec.Lesson != nil {
		return held{evt: evt, text: rec.Lesson.Text}
	}
	plain, err := snowclaw.Open(e, s.o.AgentSecret, s.agentPK, "")
	if err != nil {
		return held{evt: evt, text: "(encrypted; not readable by the agent)"}
	}
	// a memory may say only its context; an app's own record is shown whole
	m := snowclaw.DecodeMemory(plain)
	return held{evt: evt, text: cmp.Or(strings.TrimSpace(m.Summary), strings.TrimSpace(m.Context), plain)}
}
