package groups

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/relay"
	"github.com/snowclaw/snowclaw/relay/store"
)

// effect is what an applied event asks the relay to do once the state lock
// is released: publishing runs every hook again, including ours.
type effect struct {
	group       string
	metadata    bool     // the state changed: 39000–39003 are due
	putUser     string   // answer a join with a relay-signed 9000
	removeUser  string   // answer a leave with a relay-signed 9001
	deleteIDs   []string // 9005 targets
	deleteGroup bool     // 9008: drop every event of the group
	// also are other groups whose metadata the change altered: a
	// parent gaining or losing a child, children of a deleted group
	also []string
}

// OnEventSaved applies a stored group event to the state and, for an
// event this instance stored, carries out its consequences. Another
// instance's event changes the state alike; that instance carries out
// the consequences.
func (s *Groups) OnEventSaved(ctx context.Context, evt *snowclaw.Event) {
	if snowclaw.IsGroupMetadataKind(evt.Kind) {
		if evt.PubKey == s.opts.IDs.Relay {
			s.meta.stored(evt.Event, relay.FromPeer(ctx))
		}
		return
	}
	if !snowclaw.IsGroupStateKind(evt.Kind) {
		return
	}
	pos := s.position(ctx)
	s.mu.Lock()
	eff := s.apply(evt, pos)
	s.mu.Unlock()
	if relay.FromPeer(ctx) {
		return
	}
	s.carryOut(ctx, evt, eff)
}

// position is the stored event's position in the store's order. A store
// that keeps none (0) gets one after every position seen: such a store
// is this process's alone, and it applies events as it stores them.
func (s *Groups) position(ctx context.Context) at {
	p := relay.Position(ctx)
	if p == 0 {
		s.mu.Lock()
		s.local++
		p = s.local
		s.mu.Unlock()
	}
	return p
}

// apply changes the state for one event at position p (s.mu held) and
// says what it asks of the relay. It never fails: an event the rules
// would refuse now (stored before a rule existed, or racing a change on
// another instance) changes what the registers say, or nothing.
func (s *Groups) apply(evt *snowclaw.Event, p at) effect {
	s.local = max(s.local, p)
	gid := evt.Group
	if evt.GroupErr != nil || gid == "" {
		return effect{} // refused on write; stored before that, it names no group
	}
	if d, ok := s.deleted[gid]; ok && p <= d {
		return effect{} // of a group deleted since
	}
	g := s.groups[gid]
	if evt.Kind == snowclaw.KindCreateGroup {
		if g == nil {
			g = newGroup(gid)
			s.groups[gid] = g
		}
		edit, _ := snowclaw.ReadGroupEdit(evt.Tags) // refused on write when it does not read
		if !g.create(evt.PubKey, edit, p, s.opts.Defaults) {
			return effect{}
		}
		g.changedAt = time.Now()
		return effect{group: gid, metadata: true, also: s.childrenOf(gid)}
	}
	if g == nil {
		return effect{} // no such group (any more)
	}
	g.changedAt = time.Now()
	eff := effect{group: gid, metadata: true}
	in, out, none := true, false, []string(nil)
	switch evt.Kind {
	case snowclaw.KindPutUser:
		if evt.PubKey == s.opts.IDs.Relay {
			// the relay's own put-user acknowledges a join, which
			// changed the state itself; applied, it could re-add a
			// member removed between the join and its answer
			return effect{}
		}
		if pt := evt.Tags.Find("p"); len(pt) >= 2 {
			roles := slices.DeleteFunc(slices.Clone([]string(pt[2:])), func(r string) bool { return r == "" })
			g.setMember(pt[1], &in, &roles, p)
		}
	case snowclaw.KindRemoveUser:
		if evt.PubKey == s.opts.IDs.Relay {
			return effect{} // acknowledges a leave, likewise
		}
		if pt := evt.Tags.Find("p"); len(pt) >= 2 {
			g.setMember(pt[1], &out, &none, p)
			g.removedBy(pt[1], p)
		}
	case snowclaw.KindEditMetadata:
		before := s.parentOf(g)
		edit, _ := snowclaw.ReadGroupEdit(evt.Tags)
		g.edit(edit, p, s.opts.Defaults)
		if after := s.parentOf(g); after != before {
			eff.also = slices.DeleteFunc([]string{before, after}, func(id string) bool { return id == "" })
		}
	case snowclaw.KindUpdatePins:
		g.pin(evt.Tags, p)
	case snowclaw.KindDeleteEvent:
		eff.metadata = false
		eff.deleteIDs = snowclaw.TagValues(evt.Event, "e")
	case snowclaw.KindDeleteGroup:
		if p > g.rec.born {
			delete(s.groups, gid)
		}
		if d, ok := s.deleted[gid]; !ok || p > d {
			s.deleted[gid] = p
		}
		eff.metadata = false
		eff.deleteGroup = true
		eff.also = s.childrenOf(gid) // roots now (NIP-29)
	case snowclaw.KindCreateInvite:
		g.noteInvite(evt.Event)
		eff.metadata = false
	case snowclaw.KindJoinRequest:
		// a join after a moderator's removal waits for a moderator
		// (checkJoin): stored for them to see, it makes no member
		g.join(evt.PubKey, joinCode(evt.Event), p)
		if hasMember(g, evt.PubKey) {
			eff.putUser = evt.PubKey
		}
	case snowclaw.KindLeaveRequest:
		g.setMember(evt.PubKey, &out, &none, p)
		eff.removeUser = evt.PubKey
	default:
		return effect{}
	}
	return eff
}

func (s *Groups) carryOut(ctx context.Context, evt *snowclaw.Event, eff effect) {
	if eff.group == "" {
		return
	}
	if eff.putUser != "" {
		s.publishSigned(ctx, snowclaw.KindPutUser, nostr.Tags{{"h", eff.group}, {"p", eff.putUser}}, "join request accepted")
	}
	if eff.removeUser != "" {
		s.publishSigned(ctx, snowclaw.KindRemoveUser, nostr.Tags{{"h", eff.group}, {"p", eff.removeUser}}, "left the group")
	}
	if len(eff.deleteIDs) > 0 {
		s.deleteEvents(ctx, eff.deleteIDs, eff.group)
	}
	if eff.deleteGroup {
		s.deleteGroup(ctx, eff.group, evt.ID)
	}
	if eff.metadata || eff.deleteGroup {
		s.meta.changed(ctx, eff.group)
	}
	for _, gid := range eff.also {
		s.meta.changed(ctx, gid)
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
		if !snowclaw.ReadEvent(evt).NamesGroup(group) || snowclaw.IsGroupStateKind(evt.Kind) || snowclaw.IsGroupMetadataKind(evt.Kind) {
			continue
		}
		if err := s.del(ctx, evt); err != nil {
			s.log.Error("deleting group event", "group", group, "id", evt.ID, "err", err)
		}
	}
}

// deleteGroup removes every event of a deleted group, the delete-group
// request itself last: while it is stored, a restart knows the group is
// gone and finishes the job (Start).
func (s *Groups) deleteGroup(ctx context.Context, gid, request string) {
	events, err := store.All(ctx, s.opts.Store, nostr.Filter{Tags: nostr.TagMap{"h": {gid}}})
	if err != nil {
		s.log.Error("listing a deleted group's events", "group", gid, "err", err)
		return
	}
	var last []*nostr.Event
	for _, evt := range events {
		// NamesGroup, not Group: events stored with several h tags
		// before they were refused go with every group they name
		if !snowclaw.ReadEvent(evt).NamesGroup(gid) {
			continue
		}
		if evt.Kind == snowclaw.KindDeleteGroup && (request == "" || evt.ID == request) {
			last = append(last, evt)
			continue
		}
		if err := s.del(ctx, evt); err != nil {
			s.log.Error("deleting group event", "group", gid, "id", evt.ID, "err", err)
			return
		}
	}
	for _, evt := range last {
		if err := s.del(ctx, evt); err != nil {
			s.log.Error("deleting group event", "group", gid, "id", evt.ID, "err", err)
		}
	}
}

// Load rebuilds the state from the stored group events in the store's
// order. It only reads: the metadata is brought in line by Start, once
// the relay is wired and can publish.
func (s *Groups) Load(ctx context.Context) error {
	var events []store.Positioned
	err := store.EachInOrder(ctx, s.opts.Store, nostr.Filter{Kinds: snowclaw.GroupStateKinds}, func(evt *nostr.Event, p int64) bool {
		events = append(events, store.Positioned{Event: evt, Pos: p})
		return true
	})
	if err != nil {
		return err
	}
	legacyOrder(events)
	s.mu.Lock()
	s.groups, s.deleted = make(map[string]*Group), make(map[string]at)
	for _, e := range events {
		s.apply(snowclaw.ReadEvent(e.Event), e.Pos)
	}
	n := len(s.groups)
	s.mu.Unlock()
	s.log.Info("group state rebuilt", "events", len(events), "groups", n)
	return nil
}

// legacyOrder gives the events a store kept no position for (position 0:
// stored before it kept them) positions before every other, in the order
// the relay applied them then: created_at, and inside a second the order
// they can only have happened in.
func legacyOrder(events []store.Positioned) {
	n := 0
	for n < len(events) && events[n].Pos == 0 {
		n++
	}
	legacy := events[:n]
	slices.SortStableFunc(legacy, func(a, b store.Positioned) int {
		if c := cmp.Compare(a.Event.CreatedAt, b.Event.CreatedAt); c != 0 {
			return c
		}
		if c := cmp.Compare(replayRank(a.Event.Kind), replayRank(b.Event.Kind)); c != 0 {
			return c
		}
		return cmp.Compare(a.Event.ID, b.Event.ID)
	})
	for i := range legacy {
		legacy[i].Pos = at(i - n)
	}
}

// replayRank orders legacy events of the same second the way they can
// only have happened: a group is created before anyone joins, joins come
// before role changes, leaving and deleting come last.
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
