package groups

import (
	"context"
	"slices"
	"sort"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/relay"
	"github.com/snowclaw/snowclaw/relay/store"
)

// effect is what an applied event asks the relay to do once the state lock
// is released: publishing runs every hook again, including ours.
type effect struct {
	group       string
	metadata    bool     // republish 39000–39003
	putUser     string   // answer a join with a relay-signed 9000
	removeUser  string   // answer a leave with a relay-signed 9001
	deleteIDs   []string // 9005 targets
	deleteGroup bool     // 9008: drop every event of the group
}

// OnEventSaved applies a stored group event to the state and carries out
// its consequences.
func (s *Groups) OnEventSaved(ctx context.Context, evt *nostr.Event) {
	if relay.FromPeer(ctx) {
		s.peerSaved(ctx, evt)
		return
	}
	if !snowclaw.IsGroupStateKind(evt.Kind) {
		return
	}
	s.mu.Lock()
	eff := s.apply(evt, true)
	s.mu.Unlock()
	s.carryOut(ctx, eff)
	if s.shared {
		// the snapshot just published is in the store: derive the group
		// from it as every other instance does
		if gid := snowclaw.GroupOf(evt); gid != "" {
			s.reload(ctx, gid)
		}
	}
}

// peerSaved follows a group change another instance over a shared store
// made: that instance carries out its consequences (metadata, joins,
// deletions); here the group is derived from the store again (reload),
// after its moderation event and again after its new snapshot.
func (s *Groups) peerSaved(ctx context.Context, evt *nostr.Event) {
	var gid string
	switch {
	case snowclaw.IsGroupStateKind(evt.Kind):
		gid = snowclaw.GroupOf(evt)
	case snowclaw.IsGroupMetadataKind(evt.Kind) && evt.PubKey == s.opts.IDs.Relay:
		gid = evt.Tags.GetD()
	}
	if gid != "" {
		s.reload(ctx, gid)
	}
}

// apply changes the state for one event. live is false while replaying the
// store at start-up, when consequences already happened and are skipped.
func (s *Groups) apply(evt *nostr.Event, live bool) effect {
	gid, err := snowclaw.ParseGroup(evt)
	if err != nil || gid == "" {
		return effect{} // refused on write; stored before that, it names no group
	}
	eff := effect{group: gid, metadata: true}
	g := s.groups[gid]
	if g == nil && evt.Kind != snowclaw.KindCreateGroup {
		return effect{}
	}
	switch evt.Kind {
	case snowclaw.KindCreateGroup:
		if g != nil {
			return effect{}
		}
		g = newGroup(gid, s.opts.Defaults)
		g.applyMetadataTags(evt.Tags)
		g.Members[evt.PubKey] = []string{RoleAdmin}
		s.groups[gid] = g
	case snowclaw.KindPutUser:
		if p := evt.Tags.Find("p"); len(p) >= 2 {
			if _, member := g.Members[p[1]]; member && evt.PubKey == s.opts.IDs.Relay {
				// the relay's own put-user only acknowledges a join; when
				// replayed after a same-second role change it must not
				// wipe the roles
				break
			}
			g.Members[p[1]] = slices.DeleteFunc(slices.Clone(p[2:]), func(r string) bool { return r == "" })
		}
	case snowclaw.KindRemoveUser:
		if p := evt.Tags.Find("p"); len(p) >= 2 {
			delete(g.Members, p[1])
		}
		g.noteInvite(evt, s.opts.IDs.Relay)
	case snowclaw.KindEditMetadata:
		g.applyMetadataTags(evt.Tags)
	case snowclaw.KindDeleteEvent:
		eff.metadata = false
		eff.deleteIDs = snowclaw.TagValues(evt, "e")
	case snowclaw.KindDeleteGroup:
		delete(s.groups, gid)
		eff.metadata = false
		eff.deleteGroup = true
	case snowclaw.KindCreateInvite:
		g.noteInvite(evt, s.opts.IDs.Relay)
		eff.metadata = false
	case snowclaw.KindJoinRequest:
		if _, ok := g.Members[evt.PubKey]; !ok {
			g.Members[evt.PubKey] = nil
		}
		g.noteInvite(evt, s.opts.IDs.Relay)
		// the relay's 9000 answer triggers the metadata update
		eff.metadata, eff.putUser = false, evt.PubKey
	case snowclaw.KindLeaveRequest:
		delete(g.Members, evt.PubKey)
		eff.metadata, eff.removeUser = false, evt.PubKey
	default:
		return effect{}
	}
	if g := s.groups[gid]; g != nil && evt.CreatedAt > g.lastEvent {
		g.lastEvent = evt.CreatedAt
	}
	if !live {
		return effect{}
	}
	return eff
}

func (s *Groups) carryOut(ctx context.Context, eff effect) {
	if eff.group == "" {
		return
	}
	if eff.putUser != "" {
		s.publishSigned(ctx, snowclaw.KindPutUser, eff.group, nostr.Tags{{"h", eff.group}, {"p", eff.putUser}}, "join request accepted")
	}
	if eff.removeUser != "" {
		s.publishSigned(ctx, snowclaw.KindRemoveUser, eff.group, nostr.Tags{{"h", eff.group}, {"p", eff.removeUser}}, "left the group")
	}
	if len(eff.deleteIDs) > 0 {
		s.deleteEvents(ctx, eff.deleteIDs, eff.group)
	}
	if eff.deleteGroup {
		s.deleteMatching(ctx, nostr.Filter{Tags: nostr.TagMap{"h": {eff.group}}}, eff.group)
		s.deleteMatching(ctx, nostr.Filter{
			Kinds:   []int{snowclaw.KindGroupMetadata, snowclaw.KindGroupAdmins, snowclaw.KindGroupMembers, snowclaw.KindGroupRoles},
			Authors: []string{s.opts.IDs.Relay},
			Tags:    nostr.TagMap{"d": {eff.group}},
		}, "")
	}
	if eff.metadata {
		s.publishMetadata(ctx, eff.group, false)
	}
}

// deleteEvents carries out a moderator's delete-event: the named events
// of the group, never its moderation history. checkDeleteTargets refuses
// history it may name to the requester; what it may not name (they may
// not read it) passes unnamed and must still stay.
func (s *Groups) deleteEvents(ctx context.Context, ids []string, group string) {
	events, err := store.All(ctx, s.opts.Store, nostr.Filter{IDs: ids})
	if err != nil {
		s.log.Error("listing events to delete", "group", group, "err", err)
		return
	}
	for _, evt := range events {
		if !snowclaw.NamesGroup(evt, group) || snowclaw.IsGroupStateKind(evt.Kind) || snowclaw.IsGroupMetadataKind(evt.Kind) {
			continue
		}
		if err := s.opts.Delete(ctx, evt); err != nil {
			s.log.Error("deleting group event", "group", group, "id", evt.ID, "err", err)
		}
	}
}

// deleteMatching removes every stored event matching f. With group set,
// only events of that group are touched, whatever the filter says.
func (s *Groups) deleteMatching(ctx context.Context, f nostr.Filter, group string) {
	events, err := store.All(ctx, s.opts.Store, f)
	if err != nil {
		s.log.Error("listing events to delete", "group", group, "err", err)
		return
	}
	for _, evt := range events {
		// NamesGroup, not GroupOf: events stored with several h tags
		// before they were refused go with every group they name
		if group != "" && !snowclaw.NamesGroup(evt, group) {
			continue
		}
		if err := s.opts.Delete(ctx, evt); err != nil {
			s.log.Error("deleting group event", "group", group, "id", evt.ID, "err", err)
		}
	}
}

// Load rebuilds the state from the stored group events, oldest first, and
// republishes metadata that is missing or stale (a crash between a state
// change and its metadata leaves it so).
func (s *Groups) Load(ctx context.Context) error {
	events, snaps, err := s.history(ctx, "")
	if err != nil {
		return err
	}
	groups := s.replay(events, snaps)
	s.mu.Lock()
	s.groups = groups
	ids := make([]string, 0, len(s.groups))
	for id := range s.groups {
		ids = append(ids, id)
	}
	s.mu.Unlock()

	if err := s.loadMetaTimestamps(ctx); err != nil {
		return err
	}
	for _, id := range ids {
		s.publishMetadata(ctx, id, true)
	}
	s.log.Info("group state rebuilt", "events", len(events), "groups", len(ids))
	return nil
}

// stateKinds are the moderation and request kinds state is replayed from.
var stateKinds = func() []int {
	var kinds []int
	for k := 9000; k <= 9022; k++ {
		kinds = append(kinds, k)
	}
	return kinds
}()

// history reads the stored state events, oldest first in replay order,
// and the relay's newest snapshots: of every group, or of gid alone.
func (s *Groups) history(ctx context.Context, gid string) ([]*nostr.Event, map[string]*snapshot, error) {
	f := nostr.Filter{Kinds: stateKinds}
	if gid != "" {
		f.Tags = nostr.TagMap{"h": {gid}}
	}
	events, err := store.All(ctx, s.opts.Store, f)
	if err != nil {
		return nil, nil, err
	}
	sort.SliceStable(events, func(i, j int) bool {
		a, b := events[i], events[j]
		if a.CreatedAt != b.CreatedAt {
			return a.CreatedAt < b.CreatedAt
		}
		return replayRank(a.Kind) < replayRank(b.Kind)
	})
	snaps, err := s.loadSnapshots(ctx, gid)
	return events, snaps, err
}

// replay derives the groups' state from their history: the same events
// give the same state on every instance, whatever order they arrived in.
func (s *Groups) replay(events []*nostr.Event, snaps map[string]*snapshot) map[string]*Group {
	t := &Groups{opts: s.opts, log: s.log, groups: make(map[string]*Group)}
	for _, evt := range events {
		t.apply(evt, false)
	}
	for gid, g := range t.groups {
		sn := snaps[gid]
		if sn == nil {
			continue
		}
		g.restore(sn)
		for _, evt := range events {
			if evt.CreatedAt > sn.at && snowclaw.GroupOf(evt) == gid {
				t.apply(evt, false)
			}
		}
	}
	// invite codes and their revocations are not in the snapshot and
	// their order does not matter; a 9009, 9021 or 9001 dated before its
	// group's 9007 was skipped above
	for _, evt := range events {
		if g := t.groups[snowclaw.GroupOf(evt)]; g != nil {
			g.noteInvite(evt, s.opts.IDs.Relay)
		}
	}
	return t.groups
}

// reload derives one group's state from the store again. Over a shared
// store it follows every change another instance made to the group:
// applying changes in the order each instance happened to receive them
// could leave two instances with different members after a race (a
// put-user on one, a remove-user on the other, in the same instant); the
// store's history, read the same way by all, cannot.
func (s *Groups) reload(ctx context.Context, gid string) {
	events, snaps, err := s.history(ctx, gid)
	if err != nil {
		s.log.Error("reloading a group's state from the store", "group", gid, "err", err)
		return
	}
	g := s.replay(events, snaps)[gid]
	s.mu.Lock()
	defer s.mu.Unlock()
	if g == nil {
		delete(s.groups, gid)
		return
	}
	s.groups[gid] = g
}

// replayRank orders events of the same second the way they can only have
// happened: a group is created before anyone joins, joins come before role
// changes, leaving and deleting come last.
func replayRank(kind int) int {
	switch kind {
	case snowclaw.KindCreateGroup:
		return 0
	case snowclaw.KindJoinRequest:
		return 1
	case snowclaw.KindLeaveRequest:
		return 3
	case snowclaw.KindDeleteEvent:
		return 4
	case snowclaw.KindDeleteGroup:
		return 5
	}
	return 2
}
