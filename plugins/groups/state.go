package groups

import (
	"regexp"
	"slices"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/policies"
)

// Roles this relay gives meaning to. Other role names are accepted on
// put-user and listed, but grant nothing.
const (
	RoleAdmin     = "admin"
	RoleModerator = "moderator"
)

var roleDescriptions = [][2]string{
	{RoleAdmin, "edits metadata, manages members and roles, deletes events, deletes the group"},
	{RoleModerator, "adds and removes plain members, deletes events, creates invite codes"},
}

var groupIDPattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Group is one NIP-29 group as the relay enforces it.
type Group struct {
	ID      string
	Name    string
	Picture string
	About   string
	policies.GroupInfo

	Members map[string][]string // pubkey → roles (empty for plain members)
	Invites map[string]bool     // invite codes from create-invite (9009)

	// JoinedWith and Removed make revocation derivable from the stored
	// events in any order: the codes each pubkey presented in an accepted
	// join (9021), and the pubkeys a moderator removed (a 9001 not signed
	// by the relay, whose own 9001 only acknowledges a leave).
	JoinedWith map[string][]string
	Removed    map[string]bool

	// lastEvent is the newest created_at among the events applied, so the
	// metadata snapshot can be dated no earlier than what it reflects
	lastEvent nostr.Timestamp
}

func newGroup(id string, defaults policies.GroupInfo) *Group {
	return &Group{
		ID:         id,
		Name:       id,
		GroupInfo:  defaults,
		Members:    make(map[string][]string),
		Invites:    make(map[string]bool),
		JoinedWith: make(map[string][]string),
		Removed:    make(map[string]bool),
	}
}

// noteInvite records what a stored event says about invite codes: a code
// created (9009), a code a joiner presented (9021), a person a moderator
// removed (9001). None of it depends on order, so Load applies it to every
// stored event of the group, including those dated before its creation,
// which the replay by created_at skips.
func (g *Group) noteInvite(evt *nostr.Event, relay string) {
	switch evt.Kind {
	case snowclaw.KindCreateInvite:
		for _, c := range snowclaw.TagValues(evt, "code") {
			g.Invites[c] = true
		}
	case snowclaw.KindJoinRequest:
		if code := joinCode(evt); code != "" && !slices.Contains(g.JoinedWith[evt.PubKey], code) {
			g.JoinedWith[evt.PubKey] = append(g.JoinedWith[evt.PubKey], code)
		}
	case snowclaw.KindRemoveUser:
		if p := evt.Tags.Find("p"); len(p) >= 2 && evt.PubKey != relay {
			g.Removed[p[1]] = true
		}
	}
}

// InviteValid reports whether code lets someone join. A code is revoked
// once anyone who joined with it has been removed by a moderator, so the
// removed member cannot come back with it, nor hand it to someone else.
// The rule reads two sets, not the order of events, so a restart (which
// replays by created_at, a date the senders chose) rebuilds the same
// answer the live relay gave.
func (g *Group) InviteValid(code string) bool {
	if code == "" || !g.Invites[code] {
		return false
	}
	for pk := range g.Removed {
		if slices.Contains(g.JoinedWith[pk], code) {
			return false
		}
	}
	return true
}

func (g *Group) hasRole(pk, role string) bool {
	roles, ok := g.Members[pk]
	return ok && slices.Contains(roles, role)
}

// privileged reports whether any of roles grants a moderation power.
func privileged(roles []string) bool {
	return slices.Contains(roles, RoleAdmin) || slices.Contains(roles, RoleModerator)
}

// applyMetadataTags reads the group-metadata fields of a 9007 or 9002.
// Flags are changed only when named, in either spelling clients use
// (["private"] / ["public"], ["closed"] / ["open"], …), so an edit that
// only renames the group does not make it public by omission.
func (g *Group) applyMetadataTags(tags nostr.Tags) {
	for _, t := range tags {
		if len(t) == 0 {
			continue
		}
		val := ""
		if len(t) >= 2 {
			val = t[1]
		}
		switch t[0] {
		case "name":
			g.Name = val
		case "picture":
			g.Picture = val
		case "about":
			g.About = val
		case "private":
			g.Private = true
		case "public":
			g.Private = false
		case "hidden":
			g.Hidden = true
		case "visible":
			g.Hidden = false
		case "closed":
			g.Closed = true
		case "open":
			g.Closed = false
		case "encrypted":
			g.Encrypted = true
		case "unencrypted":
			g.Encrypted = false
		}
	}
	// writes are always members-only here (docs/access.md)
	g.Restricted = true
}
