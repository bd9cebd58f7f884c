package groups

import (
	"regexp"
	"slices"
	"time"

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

// Group is one NIP-29 group as the relay enforces it: the fields are what
// the rules read, derived from the group's registers (record).
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

	rec       *record   // nil in a copy (Snapshot)
	changedAt time.Time // when this instance last applied a change to it
}

// A group's state is a function of its moderation events and their
// positions in the store's order (store.Sequencer), the same on every
// instance and after every restart. Applying the events in that order
// gives it, but an instance cannot always: it applies its own events as
// it stores them, and another instance's event with a lower position may
// reach it a moment later. So every piece of state an event sets is a
// register that keeps the value of the highest position written to it
// (last writer wins, over the store's order, never over created_at):
// applied in any order, the events leave the registers as applying them
// in order would. An instance decides only after applying every change
// committed before (relay.caughtUp), so an event it accepted never
// precedes, in the store's order, one it had not applied.

// at is a position in the store's order.
type at = int64

// record is a group's registers.
type record struct {
	// creates are the create-group events (9007) applied since the last
	// delete-group: the lowest position made the group (the others lost
	// a race and change nothing); born is that position.
	creates map[at]created
	born    at
	// fields are metadata edits (9002): name → value and position.
	fields map[string]fieldReg
	// members are each pubkey's presence and roles.
	members map[string]*memberReg
}

type created struct {
	author string
	fields []fieldSet
}

type fieldReg struct {
	val string
	at  at
}

// memberReg is a pubkey's two registers. Presence is set by put-user and
// join (in) and remove-user and leave (out); roles by put-user (the roles
// given) and by remove-user and leave (none), never by a join, so a join
// racing a role change keeps the role.
type memberReg struct {
	in      bool
	inAt    at
	roles   []string
	rolesAt at
}

// fieldSet is one metadata field a 9007 or 9002 names; booleans are "1"
// or "".
type fieldSet struct{ name, val string }

// metadataFields reads the group-metadata fields of a 9007 or 9002.
// Flags are set only when named, in either spelling clients use
// (["private"] / ["public"], ["closed"] / ["open"], …), so an edit that
// only renames the group does not make it public by omission; when a tag
// is named twice the last one counts.
func metadataFields(tags nostr.Tags) []fieldSet {
	var out []fieldSet
	for _, t := range tags {
		if len(t) == 0 {
			continue
		}
		val := ""
		if len(t) >= 2 {
			val = t[1]
		}
		var f fieldSet
		switch t[0] {
		case "name", "picture", "about":
			f = fieldSet{t[0], val}
		case "private", "hidden", "closed", "encrypted":
			f = fieldSet{t[0], "1"}
		case "public":
			f = fieldSet{"private", ""}
		case "visible":
			f = fieldSet{"hidden", ""}
		case "open":
			f = fieldSet{"closed", ""}
		case "unencrypted":
			f = fieldSet{"encrypted", ""}
		default:
			continue
		}
		out = append(out, f)
	}
	return out
}

func newGroup(id string) *Group {
	return &Group{
		ID:         id,
		Members:    make(map[string][]string),
		Invites:    make(map[string]bool),
		JoinedWith: make(map[string][]string),
		Removed:    make(map[string]bool),
		rec: &record{
			creates: make(map[at]created),
			fields:  make(map[string]fieldReg),
			members: make(map[string]*memberReg),
		},
	}
}

// create applies a create-group at position p; it reports whether the
// group's state changed (p is now the lowest create).
func (g *Group) create(author string, tags nostr.Tags, p at, defaults policies.GroupInfo) bool {
	r := g.rec
	if _, ok := r.creates[p]; ok {
		return false
	}
	r.creates[p] = created{author: author, fields: metadataFields(tags)}
	if len(r.creates) > 1 && p > r.born {
		return false
	}
	r.born = p
	g.refreshFields(defaults)
	clear(g.Members)
	for pk := range r.members {
		g.refreshMember(pk)
	}
	g.refreshMember(author)
	return true
}

// edit applies a 9002's fields at position p.
func (g *Group) edit(fields []fieldSet, p at, defaults policies.GroupInfo) {
	for _, f := range fields {
		if reg, ok := g.rec.fields[f.name]; !ok || p > reg.at {
			g.rec.fields[f.name] = fieldReg{f.val, p}
		}
	}
	g.refreshFields(defaults)
}

// setMember writes pk's registers at position p: presence when in is
// set, roles when roles is set.
func (g *Group) setMember(pk string, in *bool, roles *[]string, p at) {
	m := g.rec.members[pk]
	if m == nil {
		m = &memberReg{inAt: minAt, rolesAt: minAt}
		g.rec.members[pk] = m
	}
	if in != nil && p > m.inAt {
		m.in, m.inAt = *in, p
	}
	if roles != nil && p > m.rolesAt {
		m.roles, m.rolesAt = *roles, p
	}
	g.refreshMember(pk)
}

// minAt is below every position: legacy events get negative ones.
const minAt at = -1 << 62

// refreshMember derives pk's membership from its registers: only writes
// after the group's creation count, and the creator is an admin member
// as of the creation.
func (g *Group) refreshMember(pk string) {
	r := g.rec
	in, inAt := false, minAt
	var roles []string
	rolesAt := minAt
	if m := r.members[pk]; m != nil {
		if m.inAt > r.born {
			in, inAt = m.in, m.inAt
		}
		if m.rolesAt > r.born {
			roles, rolesAt = m.roles, m.rolesAt
		}
	}
	if c, ok := r.creates[r.born]; ok && c.author == pk {
		if inAt < r.born {
			in = true
		}
		if rolesAt < r.born {
			roles = []string{RoleAdmin}
		}
	}
	if in {
		g.Members[pk] = roles
	} else {
		delete(g.Members, pk)
	}
}

// refreshFields derives the metadata: an edit after the creation, else
// what the creation named, else the configured default.
func (g *Group) refreshFields(defaults policies.GroupInfo) {
	r := g.rec
	bit := func(b bool) string {
		if b {
			return "1"
		}
		return ""
	}
	vals := map[string]string{
		"name": g.ID, "picture": "", "about": "",
		"private": bit(defaults.Private), "hidden": bit(defaults.Hidden),
		"closed": bit(defaults.Closed), "encrypted": bit(defaults.Encrypted),
	}
	for _, f := range r.creates[r.born].fields {
		vals[f.name] = f.val
	}
	for name, reg := range r.fields {
		if reg.at > r.born {
			vals[name] = reg.val
		}
	}
	g.Name, g.Picture, g.About = vals["name"], vals["picture"], vals["about"]
	g.Private, g.Hidden, g.Closed, g.Encrypted = vals["private"] != "", vals["hidden"] != "", vals["closed"] != "", vals["encrypted"] != ""
	// writes are always members-only here (docs/access.md)
	g.Restricted = true
}

// noteInvite records what a stored event says about invite codes: a code
// created (9009), a code a joiner presented (9021), a person a moderator
// removed (9001). None of it depends on order.
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
// The rule reads two sets, not the order of events.
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
