package memory

import (
	"context"
	"slices"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/relay/store"
)

// List and get. Every memory returned passed the read rule of REQ
// (CanRead) for reader; what it says is decrypted only as view.go allows.

const (
	defaultListLimit = 50
	maxListLimit     = 500
	maxHistoryDepth  = 64 // versions followed from one memory, each way
)

// memorySet is every stored memory item and the version links between
// them, as one reader sees them.
type memorySet struct {
	all      map[string]*nostr.Event   // every memory item, readable or not
	readable []*nostr.Event            // those the reader may read, newest first
	canRead  map[string]bool           // id → readable
	newer    map[string][]*nostr.Event // id → memories naming it in snow:supersedes, newest first
}

// memories walks the stored memory items. Versions the reader may not read
// still link the chain (a promotion passes through tiers), but are never
// returned.
func (s *Service) memories(ctx context.Context, reader string) (*memorySet, error) {
	set := &memorySet{all: map[string]*nostr.Event{}, canRead: map[string]bool{}, newer: map[string][]*nostr.Event{}}
	var walk []*nostr.Event
	err := store.Each(ctx, s.o.Store, nostr.Filter{Kinds: []int{snowclaw.KindAppData}}, func(evt *nostr.Event) bool {
		if !snowclaw.ReadEvent(evt).IsMemoryItem() {
			return true
		}
		walk = append(walk, evt)
		set.all[evt.ID] = evt
		if s.o.CanRead(reader, evt) {
			set.readable = append(set.readable, evt)
			set.canRead[evt.ID] = true
		}
		return true
	})
	if err != nil {
		return nil, snowclaw.StoreFailed(err, "reading the store")
	}
	for _, evt := range walk { // newest first, so each newer list is too
		for _, old := range snowclaw.TagValues(evt, snowclaw.TagSupersedes) {
			if o, ok := set.all[old]; ok && s.maySupersede(evt, o) {
				set.newer[old] = append(set.newer[old], evt)
			}
		}
	}
	return set, nil
}

// maySupersede decides whether newer's snow:supersedes link to older
// counts. Anyone can name any id in a tag; only the memory's author, its
// person, the agent (which writes promotions and corrections) and the
// owner may retire it, or a stranger could hide anyone's memory.
func (s *Service) maySupersede(newer, older *nostr.Event) bool {
	pk := newer.PubKey
	person, ok := snowclaw.ReadEvent(older).Person(s.ids.Agent)
	return pk == older.PubKey || pk == s.ids.Agent || (s.ids.Owner != "" && pk == s.ids.Owner) || ok && pk == person
}

// supersededBy lists the readable memories that replace id, newest first.
func (s *memorySet) supersededBy(id string) []string {
	var out []string
	for _, n := range s.newer[id] {
		if s.canRead[n.ID] {
			out = append(out, n.ID)
		}
	}
	return out
}

// List lists the memory items reader may read, newest first,
// filtered by req; versions replaced by a readable newer one are left out
// unless req.IncludeSuperseded.
func (s *Service) List(ctx context.Context, reader string, req snowclaw.ListRequest) ([]snowclaw.MemoryView, error) {
	match, limit, err := listMatcher(req)
	if err != nil {
		return nil, err
	}
	set, err := s.memories(ctx, reader)
	if err != nil {
		return nil, err
	}
	v := s.viewerFor(reader)
	out := []snowclaw.MemoryView{}
	for _, evt := range set.readable {
		if len(out) >= limit {
			break
		}
		by := set.supersededBy(evt.ID)
		if !match(evt) || (len(by) > 0 && !req.IncludeSuperseded) {
			continue
		}
		mv := v.view(evt)
		mv.SupersededBy = by
		out = append(out, mv)
	}
	return out, nil
}

// listMatcher checks a ListRequest and returns its filter and limit.
func listMatcher(req snowclaw.ListRequest) (func(*nostr.Event) bool, int, error) {
	switch req.Tier {
	case "", snowclaw.TierPublic, snowclaw.TierGroup, snowclaw.TierPrivate, snowclaw.TierInternal:
	default:
		return nil, 0, snowclaw.Invalid("tier %q: want public, group, private or internal", req.Tier)
	}
	source := ""
	if req.Source != "" {
		pk, err := snowclaw.ParsePubkey(req.Source)
		if err != nil {
			return nil, 0, snowclaw.Invalid("source: %v", err)
		}
		source = pk
	}
	if req.Until < 0 || req.Limit < 0 {
		return nil, 0, snowclaw.Invalid("until and limit cannot be negative")
	}
	limit := req.Limit
	if limit == 0 {
		limit = defaultListLimit
	}
	limit = min(limit, maxListLimit)
	topic := strings.TrimPrefix(req.Topic, snowclaw.PrefixMemoryItem)
	match := func(evt *nostr.Event) bool {
		e := snowclaw.ReadEvent(evt)
		switch {
		case req.Tier != "" && e.Tier != req.Tier,
			topic != "" && !strings.HasPrefix(e.Subject, topic),
			req.Group != "" && e.Group != req.Group,
			req.Until > 0 && int64(evt.CreatedAt) > req.Until:
			return false
		case source != "":
			src, err := snowclaw.ParsePubkey(firstTag(evt, snowclaw.TagSource, evt.PubKey))
			return err == nil && src == source
		}
		return true
	}
	return match, limit, nil
}

// Get returns one memory with its versions: those it supersedes,
// followed back transitively, and those that supersede it, both newest
// first and both only as far as reader may read them. A missing memory
// and one reader may not read get the same not-found.
func (s *Service) Get(ctx context.Context, reader, id string) (snowclaw.MemoryDetail, error) {
	id = strings.ToLower(strings.TrimSpace(id))
	if !isEventID(id) {
		return snowclaw.MemoryDetail{}, snowclaw.Invalid("%q is not an event id (64 hex characters)", id)
	}
	set, err := s.memories(ctx, reader)
	if err != nil {
		return snowclaw.MemoryDetail{}, err
	}
	evt := set.all[id]
	if evt == nil || !set.canRead[id] {
		return snowclaw.MemoryDetail{}, errNotFound
	}
	v := s.viewerFor(reader)
	d := snowclaw.MemoryDetail{Memory: v.view(evt), Event: evt}
	d.Memory.SupersededBy = set.supersededBy(id)
	older := set.chain(evt, func(e *nostr.Event) []*nostr.Event {
		var out []*nostr.Event
		for _, old := range snowclaw.TagValues(e, snowclaw.TagSupersedes) {
			if o, ok := set.all[old]; ok && s.maySupersede(e, o) {
				out = append(out, o)
			}
		}
		return out
	})
	for _, o := range older {
		mv := v.view(o)
		mv.SupersededBy = set.supersededBy(o.ID)
		d.History = append(d.History, mv)
	}
	newer := set.chain(evt, func(e *nostr.Event) []*nostr.Event { return set.newer[e.ID] })
	for _, n := range newer {
		mv := v.view(n)
		mv.SupersededBy = set.supersededBy(n.ID)
		d.SupersededBy = append(d.SupersededBy, mv)
	}
	return d, nil
}

// chain follows links from start breadth first (through versions the
// reader cannot read, which are not returned) and returns the readable
// ones, newest first.
func (s *memorySet) chain(start *nostr.Event, next func(*nostr.Event) []*nostr.Event) []*nostr.Event {
	seen := map[string]bool{start.ID: true}
	queue := []*nostr.Event{start}
	var out []*nostr.Event
	for depth := 0; len(queue) > 0 && depth < maxHistoryDepth; depth++ {
		var following []*nostr.Event
		for _, e := range queue {
			for _, n := range next(e) {
				if seen[n.ID] {
					continue
				}
				seen[n.ID] = true
				following = append(following, n)
				if s.canRead[n.ID] {
					out = append(out, n)
				}
			}
		}
		queue = following
	}
	slices.SortStableFunc(out, func(a, b *nostr.Event) int { return int(b.CreatedAt) - int(a.CreatedAt) })
	return out
}

// CountFor is how many memory items reader may read (the health route's
// count).
func (s *Service) CountFor(ctx context.Context, reader string) (int, error) {
	set, err := s.memories(ctx, reader)
	if err != nil {
		return 0, err
	}
	return len(set.readable), nil
}
