package groups

import (
	"context"
	"slices"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/policies"
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
	age := time.Since(evt.CreatedAt.Time())
	if age > s.opts.MaxModerationAge {
		return snowclaw.Invalid("group event is too old (created %s ago; at most %s accepted)", age.Round(time.Second), s.opts.MaxModerationAge)
	}
	if age < -10*time.Minute {
		return snowclaw.Invalid("group event is dated in the future; check your clock")
	}

	s.mu.RLock()
	defer s.mu.RUnlock()
	g := s.groups[gid]
	switch evt.Kind {
	case snowclaw.KindCreateGroup:
		return s.checkCreate(evt.Event, gid, g)
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

// checkJoin: an open group takes anyone; a closed one, and a hidden one
// (whose refusals RejectEvent words as for a missing group), takes an
// invite code that is still valid, from someone no moderator removed:
// after a removal only a moderator's put-user brings a person back.
func checkJoin(evt *nostr.Event, gid string, g *Group) error {
	if g == nil {
		return policies.UnseenGroup(gid, evt.PubKey)
	}
	if hasMember(g, evt.PubKey) {
		return snowclaw.Duplicate("you are already a member of group %s", gid)
	}
	if !g.Closed && !g.Hidden {
		return nil
	}
	if !g.InviteValid(joinCode(evt)) {
		return snowclaw.Restricted("group %s is closed; ask an admin for an invite code and send it in a code tag", gid)
	}
	if g.Removed[evt.PubKey] {
		return snowclaw.Restricted("a moderator removed you from group %s; only a moderator can add you back", gid)
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
		if snowclaw.HasTag(evt.Event, "unrestricted") {
			return snowclaw.Invalid("this relay accepts group messages from members only, so groups cannot be made unrestricted")
		}
		if snowclaw.HasTag(evt.Event, "unencrypted") && s.forcedEncrypted(g.ID) {
			return snowclaw.Restricted("group %s is encrypted by the relay's configuration; only its owner can change that", g.ID)
		}
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
		return snowclaw.Unsupported("moderation kind %d is not implemented by this relay", evt.Kind)
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
