package groups

import (
	"context"
	"slices"
	"sort"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/relay/store"
)

// metadataEvents renders the four relay-signed state events of a group,
// unsigned and undated.
func metadataEvents(g *Group, encrypted bool) []*nostr.Event {
	meta := nostr.Tags{{"d", g.ID}, {"name", g.Name}}
	if g.Picture != "" {
		meta = append(meta, nostr.Tag{"picture", g.Picture})
	}
	if g.About != "" {
		meta = append(meta, nostr.Tag{"about", g.About})
	}
	flags := map[string]bool{"private": g.Private, "restricted": g.Restricted, "hidden": g.Hidden, "closed": g.Closed, "encrypted": encrypted}
	for flag, on := range flags {
		if on {
			meta = append(meta, nostr.Tag{flag})
		}
	}
	if !g.Private {
		meta = append(meta, nostr.Tag{"public"})
	}
	if !g.Closed {
		meta = append(meta, nostr.Tag{"open"})
	}
	sort.SliceStable(meta[2:], func(i, j int) bool { return meta[2+i][0] < meta[2+j][0] })

	members := make([]string, 0, len(g.Members))
	for pk := range g.Members {
		members = append(members, pk)
	}
	sort.Strings(members)
	admins := nostr.Tags{{"d", g.ID}}
	memberTags := nostr.Tags{{"d", g.ID}}
	for _, pk := range members {
		memberTags = append(memberTags, nostr.Tag{"p", pk})
		if roles := g.Members[pk]; len(roles) > 0 {
			// every role holder, so roles survive a rebuild from this snapshot
			admins = append(admins, append(nostr.Tag{"p", pk}, roles...))
		}
	}
	roles := nostr.Tags{{"d", g.ID}}
	for _, r := range roleDescriptions {
		roles = append(roles, nostr.Tag{"role", r[0], r[1]})
	}
	return []*nostr.Event{
		{Kind: snowclaw.KindGroupMetadata, Tags: meta},
		{Kind: snowclaw.KindGroupAdmins, Tags: admins, Content: "admins of group " + g.ID},
		{Kind: snowclaw.KindGroupMembers, Tags: memberTags, Content: "members of group " + g.ID},
		{Kind: snowclaw.KindGroupRoles, Tags: roles, Content: "roles supported by this relay"},
	}
}

// publishMetadata signs and publishes the group's 39000–39003. With
// onlyIfStale, events whose stored version already says the same are left
// alone, so a restart does not rewrite every group.
func (s *Groups) publishMetadata(ctx context.Context, gid string, onlyIfStale bool) {
	s.mu.RLock()
	g, ok := s.groups[gid]
	var events []*nostr.Event
	var floor nostr.Timestamp
	if ok {
		events = metadataEvents(g, g.Encrypted || s.forcedEncrypted(gid))
		floor = g.lastEvent
	}
	s.mu.RUnlock()
	if !ok {
		return
	}
	// one date for the four events (different kinds never tie), no
	// earlier than the newest event they reflect: Load replays only what
	// came after the snapshot
	ts := s.nextMetaTS(gid, floor)
	for _, evt := range events {
		if onlyIfStale && s.storedEquals(ctx, evt, gid) {
			continue
		}
		evt.CreatedAt = ts
		s.signAndPublish(ctx, evt)
	}
}

func (s *Groups) storedEquals(ctx context.Context, evt *nostr.Event, gid string) bool {
	ch, err := s.opts.Store.QueryEvents(ctx, nostr.Filter{
		Kinds: []int{evt.Kind}, Authors: []string{s.opts.IDs.Relay}, Tags: nostr.TagMap{"d": {gid}}, Limit: 1,
	})
	if err != nil {
		return false
	}
	equal := false
	for stored := range ch {
		equal = stored.Content == evt.Content && slices.EqualFunc(stored.Tags, evt.Tags, func(a, b nostr.Tag) bool { return slices.Equal(a, b) })
	}
	return equal
}

// nextMetaTS keeps metadata timestamps strictly increasing per group: two
// updates within one second would otherwise tie, and a tie is settled by
// id, which may keep the older state.
func (s *Groups) nextMetaTS(gid string, floor nostr.Timestamp) nostr.Timestamp {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := max(nostr.Now(), floor)
	if last := s.metaTS[gid]; ts <= last {
		ts = last + 1
	}
	s.metaTS[gid] = ts
	return ts
}

func (s *Groups) loadMetaTimestamps(ctx context.Context) error {
	return store.Each(ctx, s.opts.Store, nostr.Filter{
		Kinds:   []int{snowclaw.KindGroupMetadata, snowclaw.KindGroupAdmins, snowclaw.KindGroupMembers, snowclaw.KindGroupRoles},
		Authors: []string{s.opts.IDs.Relay},
	}, func(evt *nostr.Event) bool {
		gid := evt.Tags.GetD()
		s.mu.Lock()
		if evt.CreatedAt > s.metaTS[gid] {
			s.metaTS[gid] = evt.CreatedAt
		}
		s.mu.Unlock()
		return true
	})
}

func (s *Groups) publishSigned(ctx context.Context, kind int, gid string, tags nostr.Tags, content string) {
	s.signAndPublish(ctx, &nostr.Event{Kind: kind, Tags: tags, Content: content, CreatedAt: nostr.Now()})
}

func (s *Groups) signAndPublish(ctx context.Context, evt *nostr.Event) {
	if err := evt.Sign(s.opts.RelaySecret); err != nil {
		s.log.Error("signing group event", "kind", evt.Kind, "err", err)
		return
	}
	if err := s.opts.Publish(ctx, evt); err != nil {
		s.log.Error("publishing group event", "kind", evt.Kind, "group", snowclaw.GroupOf(evt)+evt.Tags.GetD(), "err", err)
	}
}
