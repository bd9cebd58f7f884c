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
	Banner  string
	About   string
	policies.GroupInfo
	// Parent is the parent group this group's last edit named ("" for a
	// root); it counts only while that group exists and was created
	// before the edit (Groups.parentOf).
	Parent string
	// ChildOrder is the order of children the group's last edit with
	// child tags gave; children not in it follow in the order they came.
	ChildOrder []string
	// Pins are the e and a tags of the last update-pin-list (9010);
	// PinsSet once there has been one, so an emptied list is published
	// empty rather than left as it was.
	Pins    nostr.Tags
	PinsSet bool

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
	// children and pins are lists an edit replaces whole.
	children listReg
	pins     listReg
	// members are each pubkey's presence and roles.
	members map[string]*memberReg
	// removed is the position of each pubkey's first removal by a
	// moderator: a join after it waits for a moderator (checkJoin), so
	// it counts as a presence only before it. The minimum of a set is
	// the same in any order of application.
	removed map[string]at
}

type created struct {
	author string
	fields []fieldSet
}

type fieldReg struct {
	val string
	at  at
}

// listReg is a list register: the tags of the edit at the highest
// position (at is minAt while none was applied).
type listReg struct {
	tags nostr.Tags
	at   at
}

func (l *listReg) set(tags nostr.Tags, p at) {
	if p > l.at {
		l.tags, l.at = tags, p
	}
}

// memberReg is a pubkey's registers. Presence is set by put-user (in)
// and remove-user and leave (out); roles by put-user (the roles given)
// and by remove-user and leave (none), never by a join, so a join racing
// a role change keeps the role. Joins are kept apart (their positions):
// whether one counts depends on the first removal, which may be applied
// after it.
type memberReg struct {
	in      bool
	inAt    at
	roles   []string
	rolesAt at
	joins   []joined
}

// joined is one join request: its position and the invite code it
// presented ("" for none).
type joined struct {
	at   at
	code string
}

// fieldSet is one metadata field a 9007 or 9002 sets; booleans are "1"
// or "" (bit).
type fieldSet struct{ name, val string }

func bit(b bool) string {
	if b {
		return "1"
	}
	return ""
}

// The registers of the flags and the parent link, beside the basic fields.
const (
	fieldPrivate    = "private"
	fieldRestricted = "restricted"
	fieldHidden     = "hidden"
	fieldClosed     = "closed"
	fieldEncrypted  = "encrypted"
	fieldParent     = "parent"
)

// metadataFields are the registers a 9007 or 9002 writes: the basic
// fields it names (all of them, when a 9002 states the flags), the four
// flags when a 9002 names any (a 9007 sets those it names, the others
// keep the relay's defaults), the encryption flag when named, and the
// parent link, which every 9002 that states the tree states (an absent
// parent makes a root; a 9007 sets it only when it names one).
func metadataFields(e snowclaw.GroupEdit, kind int) []fieldSet {
	var out []fieldSet
	for _, f := range snowclaw.GroupBasicFields {
		if v, ok := e.Basic[f]; ok {
			out = append(out, fieldSet{f, v})
		}
	}
	if kind == snowclaw.KindCreateGroup {
		for _, name := range []string{fieldPrivate, fieldRestricted, fieldHidden, fieldClosed} {
			if on, ok := e.Named[name]; ok {
				out = append(out, fieldSet{name, bit(on)})
			}
		}
	} else if f := e.Flags; f != nil {
		out = append(out, fieldSet{fieldPrivate, bit(f.Private)}, fieldSet{fieldRestricted, bit(f.Restricted)},
			fieldSet{fieldHidden, bit(f.Hidden)}, fieldSet{fieldClosed, bit(f.Closed)})
	}
	if e.Encrypted != nil {
		out = append(out, fieldSet{fieldEncrypted, bit(*e.Encrypted)})
	}
	if (kind == snowclaw.KindEditMetadata && e.StatesTree) || e.Parent != "" {
		out = append(out, fieldSet{fieldParent, e.Parent})
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
			creates:  make(map[at]created),
			fields:   make(map[string]fieldReg),
			children: listReg{at: minAt},
			pins:     listReg{at: minAt},
			members:  make(map[string]*memberReg),
			removed:  make(map[string]at),
		},
	}
}

// create applies a create-group at position p; it reports whether the
// group's state changed (p is now the lowest create).
func (g *Group) create(author string, edit snowclaw.GroupEdit, p at, defaults policies.GroupInfo) bool {
	r := g.rec
	if _, ok := r.creates[p]; ok {
		return false
	}
	r.creates[p] = created{author: author, fields: metadataFields(edit, snowclaw.KindCreateGroup)}
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

// edit applies a 9002 at position p.
func (g *Group) edit(e snowclaw.GroupEdit, p at, defaults policies.GroupInfo) {
	for _, f := range metadataFields(e, snowclaw.KindEditMetadata) {
		if reg, ok := g.rec.fields[f.name]; !ok || p > reg.at {
			g.rec.fields[f.name] = fieldReg{f.val, p}
		}
	}
	if e.Children != nil {
		tags := make(nostr.Tags, len(e.Children))
		for i, c := range e.Children {
			tags[i] = nostr.Tag{snowclaw.TagGroupChild, c}
		}
		g.rec.children.set(tags, p)
	}
	g.refreshFields(defaults)
}

// pin applies an update-pin-list at position p: its e and a tags, in order.
func (g *Group) pin(tags nostr.Tags, p at) {
	r := g.rec
	r.pins.set(pinTags(tags), p)
	g.Pins, g.PinsSet = nil, r.pins.at > r.born
	if g.PinsSet {
		g.Pins = r.pins.tags
	}
}

// pinTags are the e and a tags of a 9010, in order.
func pinTags(tags nostr.Tags) nostr.Tags {
	out := nostr.Tags{}
	for _, t := range tags {
		if len(t) >= 2 && (t[0] == "e" || t[0] == "a") {
			out = append(out, nostr.Tag{t[0], t[1]})
		}
	}
	return out
}

// setMember writes pk's registers at position p: presence when in is
// set, roles when roles is set.
func (g *Group) setMember(pk string, in *bool, roles *[]string, p at) {
	m := g.member(pk)
	if in != nil && p > m.inAt {
		m.in, m.inAt = *in, p
	}
	if roles != nil && p > m.rolesAt {
		m.roles, m.rolesAt = *roles, p
	}
	g.refreshMember(pk)
}

// join records pk's join request at position p, presenting code.
func (g *Group) join(pk, code string, p at) {
	m := g.member(pk)
	if !slices.ContainsFunc(m.joins, func(j joined) bool { return j.at == p }) {
		m.joins = append(m.joins, joined{p, code})
	}
	g.refreshMember(pk)
}

// removedBy records a moderator's removal of pk at position p.
func (g *Group) removedBy(pk string, p at) {
	if q, ok := g.rec.removed[pk]; !ok || p < q {
		g.rec.removed[pk] = p
	}
	g.Removed[pk] = true
	g.refreshMember(pk)
}

func (g *Group) member(pk string) *memberReg {
	m := g.rec.members[pk]
	if m == nil {
		m = &memberReg{inAt: minAt, rolesAt: minAt}
		g.rec.members[pk] = m
	}
	return m
}

// minAt is below every position: legacy events get negative ones.
const minAt at = -1 << 62

// refreshMember derives pk's membership from its registers: only writes
// after the group's creation count, a join only before pk's first
// removal by a moderator, and the creator is an admin member as of the
// creation.
func (g *Group) refreshMember(pk string) {
	r := g.rec
	in, inAt := false, minAt
	var roles []string
	rolesAt := minAt
	if m := r.members[pk]; m != nil {
		if m.inAt > r.born {
			in, inAt = m.in, m.inAt
		}
		removed, wasRemoved := r.removed[pk]
		var codes []string
		for _, j := range m.joins {
			if wasRemoved && j.at > removed {
				continue // held for a moderator: neither in, nor a code used
			}
			if j.code != "" && !slices.Contains(codes, j.code) {
				codes = append(codes, j.code)
			}
			if j.at > r.born && j.at > inAt {
				in, inAt = true, j.at
			}
		}
		if codes != nil {
			slices.Sort(codes) // a set: the same whatever order the joins came in
			g.JoinedWith[pk] = codes
		} else {
			delete(g.JoinedWith, pk)
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
// what the creation named, else the configured default. A group is
// restricted (members write) until an edit says otherwise.
func (g *Group) refreshFields(defaults policies.GroupInfo) {
	r := g.rec
	vals := map[string]string{
		fieldPrivate: bit(defaults.Private), fieldRestricted: "1", fieldHidden: bit(defaults.Hidden),
		fieldClosed: bit(defaults.Closed), fieldEncrypted: bit(defaults.Encrypted),
	}
	for _, f := range r.creates[r.born].fields {
		vals[f.name] = f.val
	}
	for name, reg := range r.fields {
		if reg.at > r.born {
			vals[name] = reg.val
		}
	}
	if vals[snowclaw.TagGroupName] == "" {
		vals[snowclaw.TagGroupName] = g.ID
	}
	g.Name, g.Picture, g.Banner, g.About = vals[snowclaw.TagGroupName], vals[snowclaw.TagGroupPicture], vals[snowclaw.TagGroupBanner], vals[snowclaw.TagGroupAbout]
	g.Private, g.Restricted = vals[fieldPrivate] != "", vals[fieldRestricted] != ""
	g.Hidden, g.Closed, g.Encrypted = vals[fieldHidden] != "", vals[fieldClosed] != "", vals[fieldEncrypted] != ""
	g.Parent = vals[fieldParent]
	g.ChildOrder = nil
	if r.children.at > r.born {
		for _, t := range r.children.tags {
			g.ChildOrder = append(g.ChildOrder, t[1])
		}
	}
	g.Pins, g.PinsSet = nil, r.pins.at > r.born
	if g.PinsSet {
		g.Pins = r.pins.tags
	}
}

// parentAt is the position of the edit that set the group's parent link.
func (g *Group) parentAt() at {
	if reg, ok := g.rec.fields[fieldParent]; ok && reg.at > g.rec.born {
		return reg.at
	}
	return g.rec.born
}

// noteInvite records a code created (9009). The codes joiners presented
// (9021, join) and the people moderators removed (9001, removedBy) are
// the members' registers. None of it depends on order.
func (g *Group) noteInvite(evt *nostr.Event) {
	switch evt.Kind {
	case snowclaw.KindCreateInvite:
		for _, c := range snowclaw.TagValues(evt, "code") {
			g.Invites[c] = true
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
