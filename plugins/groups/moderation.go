package groups

import (
	"context"
	"slices"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/relay"
)

// RejectEvent judges NIP-29 moderation events and join/leave requests
// against the current state. Other events pass through untouched; their
// membership rule lives in policies.WriteRules.
func (s *Groups) RejectEvent(ctx context.Context, evt *snowclaw.Event) error {
	if !snowclaw.IsGroupStateKind(evt.Kind) {
		return nil
	}
	if evt.GroupErr != nil {
		return snowclaw.Invalid("%s", evt.GroupErr.Error())
	}
	gid := evt.Group
	if gid == "" {
		return snowclaw.Invalid("NIP-29 group events need an h tag naming the group")
	}

	s.mu.RLock()
	defer s.mu.RUnlock()
	g := s.groups[gid]
	switch evt.Kind {
	case snowclaw.KindCreateGroup:
		if err := s.checkCreate(evt.Event, gid, g); err != nil {
			return err
		}
		return s.checkEdit(evt, gid, nil)
	case snowclaw.KindJoinRequest:
		err := checkJoin(evt.Event, gid, g)
		if err != nil && !s.seen(g, evt.PubKey) {
			err = policies.UnseenGroup(gid, evt.PubKey)
		}
		return err
	}
	if !s.seen(g, evt.PubKey) {
		return policies.UnseenGroup(gid, evt.PubKey)
	}
	if evt.Kind == snowclaw.KindLeaveRequest {
		if !hasMember(g, evt.PubKey) {
			return snowclaw.Invalid("you are not a member of group %s", gid)
		}
		return nil
	}
	return s.checkModeration(ctx, evt, g)
}

// seen is policies.MayKnowGroup on the state held under s.mu.
func (s *Groups) seen(g *Group, pk string) bool {
	if g == nil {
		return false
	}
	return policies.MayKnowGroup(s.opts.IDs, g.GroupInfo, true, hasMember(g, pk), pk)
}

// joinCode is the invite code a join request presents, or "".
func joinCode(evt *nostr.Event) string {
	if c := evt.Tags.Find("code"); len(c) >= 2 {
		return c[1]
	}
	return ""
}

func hasMember(g *Group, pk string) bool {
	_, ok := g.Members[pk]
	return ok
}

func (s *Groups) checkCreate(evt *nostr.Event, gid string, g *Group) error {
	if !groupIDPattern.MatchString(gid) {
		return snowclaw.Invalid("group ids are 1-64 characters of a-z, A-Z, 0-9, - and _")
	}
	author := evt.PubKey
	if author != s.opts.IDs.Owner && !s.opts.IDs.IsSystem(author) && !slices.Contains(s.opts.Creators, author) {
		return snowclaw.Restricted("only the relay owner and configured group creators may create groups")
	}
	if g != nil {
		return snowclaw.Duplicate("group %s already exists", gid)
	}
	return nil
}

// checkJoin: an open group takes anyone, hidden or not (hidden only
// hides its metadata; RejectEvent words its refusals as for a missing
// group); a closed one takes an invite code that is still valid. Someone
// a moderator removed is not taken back by a join, in an open group
// either: NIP-29 lets the relay "defer that decision to an
// administrator", so the request is kept for the group's moderators to
// read (relay.Held) and answered as pending; a moderator's put-user
// brings the person back.
func checkJoin(evt *nostr.Event, gid string, g *Group) error {
	if g == nil {
		return policies.UnseenGroup(gid, evt.PubKey)
	}
	if hasMember(g, evt.PubKey) {
		return snowclaw.Duplicate("you are already a member of group %s", gid)
	}
	if g.Closed && !g.InviteValid(joinCode(evt)) {
		return snowclaw.Restricted("group %s is closed; ask an admin for an invite code and send it in a code tag", gid)
	}
	if g.Removed[evt.PubKey] {
		return relay.Held(snowclaw.Restricted("your join request is pending: a moderator removed you from group %s, so its moderators decide; they can read this request, and a put-user (kind 9000) from one of them brings you back", gid))
	}
	return nil
}

// admin and moderator powers; the owner and the relay's keys hold both on
// every group so that abuse can always be cleaned up.
func (s *Groups) powers(g *Group, pk string) (admin, moderator bool) {
	if pk == s.opts.IDs.Owner || s.opts.IDs.IsSystem(pk) || g.hasRole(pk, RoleAdmin) {
		return true, true
	}
	return false, g.hasRole(pk, RoleModerator)
}

func (s *Groups) checkModeration(ctx context.Context, evt *snowclaw.Event, g *Group) error {
	admin, mod := s.powers(g, evt.PubKey)
	notAllowed := func(what, role string) error {
		return snowclaw.Restricted("you may not %s in group %s (needs the %s role)", what, g.ID, role)
	}
	switch evt.Kind {
	case snowclaw.KindPutUser, snowclaw.KindRemoveUser:
		p := evt.Tags.Find("p")
		if len(p) < 2 || !nostr.IsValid32ByteHex(p[1]) {
			return snowclaw.Invalid("put-user and remove-user need a p tag with a 64-hex public key")
		}
		if !mod {
			return notAllowed("manage members", "moderator or admin")
		}
		if !admin && (privileged(g.Members[p[1]]) || (evt.Kind == snowclaw.KindPutUser && privileged(p[2:]))) {
			return snowclaw.Restricted("only admins of group %s grant, change or remove admin and moderator roles", g.ID)
		}
	case snowclaw.KindEditMetadata:
		if !admin {
			return notAllowed("edit metadata", "admin")
		}
		return s.checkEdit(evt, g.ID, g)
	case snowclaw.KindUpdatePins:
		if !mod {
			return notAllowed("pin events", "moderator or admin")
		}
		return s.checkPins(ctx, evt, g)
	case snowclaw.KindDeleteEvent:
		if !mod {
			return notAllowed("delete events", "moderator or admin")
		}
		return s.checkDeleteTargets(ctx, evt, g)
	case snowclaw.KindDeleteGroup:
		if !admin {
			return notAllowed("delete the group", "admin")
		}
	case snowclaw.KindCreateInvite:
		if !mod {
			return notAllowed("create invites", "moderator or admin")
		}
		if c := evt.Tags.Find("code"); len(c) < 2 || c[1] == "" {
			return snowclaw.Invalid("create-invite needs a code tag")
		}
	default:
		return snowclaw.Invalid("moderation kind %d is not one this relay implements (9000, 9001, 9002, 9005, 9007, 9008, 9009, 9010)", evt.Kind)
	}
	return nil
}

func (s *Groups) checkDeleteTargets(ctx context.Context, evt *snowclaw.Event, g *Group) error {
	ids := snowclaw.TagValues(evt.Event, "e")
	if len(ids) == 0 {
		return snowclaw.Invalid("delete-event needs at least one e tag")
	}
	ch, err := s.opts.Store.QueryEvents(ctx, nostr.Filter{IDs: ids, Limit: len(ids)})
	if err != nil {
		return snowclaw.Internal("could not look up the events to delete")
	}
	var refusal error
	// what the requester may not read is answered as if it were not
	// stored (policies.Hearer); deleteEvents still deletes only this
	// group's events and never its history
	vis := policies.Visibility{IDs: s.opts.IDs, Groups: held{s}}
	hearer := policies.Hearer(ctx, evt.PubKey)
	for target := range ch {
		if refusal != nil {
			continue
		}
		t := snowclaw.ReadEvent(target)
		if ok, _ := vis.CanRead(hearer, t); !ok {
			continue
		}
		if !t.NamesGroup(g.ID) {
			refusal = snowclaw.Invalid("event %s is not in group %s", target.ID, g.ID)
		} else if snowclaw.IsGroupStateKind(target.Kind) {
			refusal = snowclaw.Invalid("moderation events are the group's history and cannot be deleted")
		}
	}
	return refusal
}
