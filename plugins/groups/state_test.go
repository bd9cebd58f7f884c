package groups_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/plugins/groups"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/relay/store"
)

// ok marks a step that must be accepted.
const ok = snowclaw.Reason(-1)

// step is one event a client sends, dated dt seconds from now.
type step struct {
	sk   string
	kind int
	dt   nostr.Timestamp
	tags nostr.Tags
	want snowclaw.Reason
}

// groupWant is the state one group must end in: nil when it must not
// exist. Members maps each member to its roles joined by commas.
type groupWant struct {
	members map[string]string
	info    policies.GroupInfo
	name    string
}

// After setup: "pub" is open and public with its creator (the owner) and
// a member; "club" is private and closed with its creator, a moderator, a
// member and the invite code "abc".
var (
	pubState  = groupWant{members: map[string]string{pub(fz.owner): "admin", pub(fz.member): ""}, info: policies.GroupInfo{Restricted: true}, name: "Pub"}
	clubState = groupWant{members: map[string]string{pub(fz.creator): "admin", pub(fz.mod): "moderator", pub(fz.member): ""}, info: policies.GroupInfo{Private: true, Restricted: true, Closed: true}, name: "club"}
)

// with returns a copy of w with the members changed: a role string sets
// a member's roles, "-" removes them.
func (w groupWant) with(changes map[string]string) *groupWant {
	out := w
	out.members = maps.Clone(w.members)
	for pk, roles := range changes {
		if roles == "-" {
			delete(out.members, pk)
		} else {
			out.members[pk] = roles
		}
	}
	return &out
}

func (w groupWant) flags(info policies.GroupInfo) *groupWant {
	w.info = info
	return &w
}

// openBadger is the relay's real store in a fresh directory, closed when
// the test ends.
func openBadger(t testing.TB) *store.Exact {
	t.Helper()
	s, err := store.OpenBadger(t.TempDir(), 1000, store.BadgerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func h(g string) nostr.Tag { return nostr.Tag{"h", g} }

func p(sk string, roles ...string) nostr.Tag { return append(nostr.Tag{"p", pub(sk)}, roles...) }

// TestStateMachine feeds NIP-29 events through the plugin's hooks in
// order, over a badger store and no sockets, and checks the state they
// leave, the refusals on the way, and that a restart (Load) rebuilds it.
func TestStateMachine(t *testing.T) {
	for _, row := range []struct {
		name  string
		steps []step
		group string
		want  *groupWant
	}{
		// create (9007)
		{"the owner creates a group", []step{{fz.owner, 9007, 0, nostr.Tags{h("new")}, ok}},
			"new", &groupWant{members: map[string]string{pub(fz.owner): "admin"}, info: policies.GroupInfo{Private: true, Restricted: true}, name: "new"}},
		{"a configured creator creates one with flags", []step{{fz.creator, 9007, 0, nostr.Tags{h("new"), {"name", "New"}, {"public"}, {"hidden"}, {"closed"}}, ok}},
			"new", &groupWant{members: map[string]string{pub(fz.creator): "admin"}, info: policies.GroupInfo{Restricted: true, Hidden: true, Closed: true}, name: "New"}},
		{"the agent creates one", []step{{fz.agent, 9007, 0, nostr.Tags{h("new")}, ok}},
			"new", &groupWant{members: map[string]string{pub(fz.agent): "admin"}, info: policies.GroupInfo{Private: true, Restricted: true}, name: "new"}},
		{"a stranger may not create one", []step{{fz.stranger, 9007, 0, nostr.Tags{h("new")}, snowclaw.ReasonRestricted}}, "new", nil},
		{"a member may not create one", []step{{fz.member, 9007, 0, nostr.Tags{h("new")}, snowclaw.ReasonRestricted}}, "new", nil},
		{"an existing id is a duplicate", []step{{fz.owner, 9007, 0, nostr.Tags{h("club")}, snowclaw.ReasonDuplicate}}, "club", &clubState},
		{"a bad id is invalid", []step{{fz.owner, 9007, 0, nostr.Tags{h("bad id")}, snowclaw.ReasonInvalid}}, "bad id", nil},
		{"no h tag is invalid", []step{{fz.owner, 9007, 0, nil, snowclaw.ReasonInvalid}}, "club", &clubState},
		{"an old create is too late", []step{{fz.owner, 9007, -7200, nostr.Tags{h("new")}, snowclaw.ReasonInvalid}}, "new", nil},

		// put-user and roles (9000)
		{"a moderator adds a plain member", []step{{fz.mod, 9000, 0, nostr.Tags{h("club"), p(fz.stranger)}, ok}},
			"club", clubState.with(map[string]string{pub(fz.stranger): ""})},
		{"a moderator may not grant a role", []step{{fz.mod, 9000, 0, nostr.Tags{h("club"), p(fz.stranger, "moderator")}, snowclaw.ReasonRestricted}}, "club", &clubState},
		{"a moderator may not change an admin", []step{{fz.mod, 9000, 0, nostr.Tags{h("club"), p(fz.creator)}, snowclaw.ReasonRestricted}}, "club", &clubState},
		{"an admin grants roles", []step{{fz.creator, 9000, 0, nostr.Tags{h("club"), p(fz.member, "moderator", "scribe")}, ok}},
			"club", clubState.with(map[string]string{pub(fz.member): "moderator,scribe"})},
		{"an admin takes a role away", []step{{fz.creator, 9000, 0, nostr.Tags{h("club"), p(fz.mod)}, ok}},
			"club", clubState.with(map[string]string{pub(fz.mod): ""})},
		{"the owner holds admin powers everywhere", []step{{fz.owner, 9000, 0, nostr.Tags{h("club"), p(fz.stranger, "admin")}, ok}},
			"club", clubState.with(map[string]string{pub(fz.stranger): "admin"})},
		{"a plain member may not add anyone", []step{{fz.member, 9000, 0, nostr.Tags{h("club"), p(fz.stranger)}, snowclaw.ReasonRestricted}}, "club", &clubState},
		{"a stranger may not add to a group they may see", []step{{fz.stranger, 9000, 0, nostr.Tags{h("pub"), p(fz.stranger)}, snowclaw.ReasonRestricted}}, "pub", &pubState},
		{"put-user needs a hex key", []step{{fz.owner, 9000, 0, nostr.Tags{h("club"), {"p", "npub1xyz"}}, snowclaw.ReasonInvalid}}, "club", &clubState},
		{"a missing group is unseen", []step{{fz.owner, 9000, 0, nostr.Tags{h("nosuch"), p(fz.stranger)}, snowclaw.ReasonRestricted}}, "nosuch", nil},

		// remove-user (9001)
		{"a moderator removes a plain member", []step{{fz.mod, 9001, 0, nostr.Tags{h("club"), p(fz.member)}, ok}},
			"club", clubState.with(map[string]string{pub(fz.member): "-"})},
		{"a moderator may not remove an admin", []step{{fz.mod, 9001, 0, nostr.Tags{h("club"), p(fz.creator)}, snowclaw.ReasonRestricted}}, "club", &clubState},
		{"the owner removes an admin", []step{{fz.owner, 9001, 0, nostr.Tags{h("club"), p(fz.creator)}, ok}},
			"club", clubState.with(map[string]string{pub(fz.creator): "-"})},
		{"a member may not remove another", []step{{fz.member, 9001, 0, nostr.Tags{h("pub"), p(fz.owner)}, snowclaw.ReasonRestricted}}, "pub", &pubState},

		// edit-metadata (9002)
		// a 9002 naming any flag states them all (an absent one is its
		// opposite); one naming none changes only the fields it names
		{"an edit naming one flag states them all", []step{{fz.creator, 9002, 0, nostr.Tags{h("club"), {"name", "Club"}, {"about", "a"}, {"hidden"}}, ok}},
			"club", &groupWant{members: clubState.members, info: policies.GroupInfo{Hidden: true}, name: "Club"}},
		{"an admin makes it public and open, then private and closed again", []step{
			{fz.creator, 9002, 0, nostr.Tags{h("club"), {"public"}, {"restricted"}, {"open"}}, ok},
			{fz.creator, 9002, 0, nostr.Tags{h("club"), {"private"}, {"restricted"}, {"closed"}}, ok},
		}, "club", &clubState},
		{"welshman's reopening edit opens a closed group", []step{
			{fz.creator, 9002, 0, nostr.Tags{h("club"), {"name", "club"}, {"restricted"}, {"d", "club"}, {"public"}}, ok},
		}, "club", clubState.flags(policies.GroupInfo{Restricted: true})},
		{"a rename keeps the flags", []step{{fz.creator, 9002, 0, nostr.Tags{h("club"), {"name", "Renamed"}}, ok}},
			"club", &groupWant{members: clubState.members, info: clubState.info, name: "Renamed"}},
		{"a moderator may not edit metadata", []step{{fz.mod, 9002, 0, nostr.Tags{h("club"), {"public"}}, snowclaw.ReasonRestricted}}, "club", &clubState},
		{"an admin makes the group unrestricted", []step{{fz.creator, 9002, 0, nostr.Tags{h("club"), {"private"}, {"closed"}, {"unrestricted"}}, ok}},
			"club", clubState.flags(policies.GroupInfo{Private: true, Closed: true})},
		// welshman copies the relay's "open" and "public" back beside
		// the flags the admin set: the flag is the NIP's word
		{"a flag beside its opposite is on", []step{{fz.creator, 9002, 0, nostr.Tags{h("club"), {"closed"}, {"open"}}, ok}},
			"club", clubState.flags(policies.GroupInfo{Closed: true})},
		{"welshman's edit making a public room private", []step{
			{fz.owner, 9002, 0, nostr.Tags{h("pub"), {"name", "Pub"}, {"private"}, {"restricted"}, {"d", "pub"}, {"public"}, {"open"}}, ok},
		}, "pub", pubState.flags(policies.GroupInfo{Private: true, Restricted: true})},
		// welshman's edit switching every flag off names none, but
		// carries the 39000's d tag: a whole copy of the metadata
		{"welshman's edit switching every flag off", []step{
			{fz.creator, 9002, 0, nostr.Tags{h("club"), {"name", "club"}, {"d", "club"}}, ok},
		}, "club", clubState.flags(policies.GroupInfo{})},
		{"encrypted and unencrypted in one edit is invalid", []step{{fz.creator, 9002, 0, nostr.Tags{h("club"), {"encrypted"}, {"unencrypted"}}, snowclaw.ReasonInvalid}}, "club", &clubState},

		// delete-group (9008)
		{"an admin deletes the group", []step{{fz.creator, 9008, 0, nostr.Tags{h("club")}, ok}}, "club", nil},
		{"a moderator may not delete it", []step{{fz.mod, 9008, 0, nostr.Tags{h("club")}, snowclaw.ReasonRestricted}}, "club", &clubState},
		{"a deleted group can be created again", []step{
			{fz.creator, 9008, 0, nostr.Tags{h("club")}, ok},
			{fz.owner, 9007, 1, nostr.Tags{h("club")}, ok},
		}, "club", &groupWant{members: map[string]string{pub(fz.owner): "admin"}, info: policies.GroupInfo{Private: true, Restricted: true}, name: "club"}},

		// join requests (9021)
		{"anyone joins an open group", []step{{fz.stranger, 9021, 0, nostr.Tags{h("pub")}, ok}},
			"pub", pubState.with(map[string]string{pub(fz.stranger): ""})},
		{"a closed group needs a code", []step{{fz.stranger, 9021, 0, nostr.Tags{h("club")}, snowclaw.ReasonRestricted}}, "club", &clubState},
		{"a wrong code", []step{{fz.stranger, 9021, 0, nostr.Tags{h("club"), {"code", "nope"}}, snowclaw.ReasonRestricted}}, "club", &clubState},
		{"the invite code", []step{{fz.stranger, 9021, 0, nostr.Tags{h("club"), {"code", "abc"}}, ok}},
			"club", clubState.with(map[string]string{pub(fz.stranger): ""})},
		{"a member joining again is a duplicate", []step{{fz.member, 9021, 0, nostr.Tags{h("pub")}, snowclaw.ReasonDuplicate}}, "pub", &pubState},
		{"a join to a missing group is unseen", []step{{fz.stranger, 9021, 0, nostr.Tags{h("nosuch")}, snowclaw.ReasonRestricted}}, "nosuch", nil},
		{"anyone joins a hidden open group", []step{
			{fz.owner, 9002, 0, nostr.Tags{h("pub"), {"name", "Pub"}, {"hidden"}, {"restricted"}}, ok},
			{fz.stranger, 9021, 0, nostr.Tags{h("pub")}, ok},
		}, "pub", pubState.with(map[string]string{pub(fz.stranger): ""}).flags(policies.GroupInfo{Restricted: true, Hidden: true})},
		{"a removed member's join to an open group waits for a moderator", []step{
			{fz.owner, 9001, 0, nostr.Tags{h("pub"), p(fz.member)}, ok},
			{fz.member, 9021, 0, nostr.Tags{h("pub")}, snowclaw.ReasonRestricted},
		}, "pub", pubState.with(map[string]string{pub(fz.member): "-"})},
		{"a removed member waiting in an open group is let back by a moderator", []step{
			{fz.owner, 9001, 0, nostr.Tags{h("pub"), p(fz.member)}, ok},
			{fz.member, 9021, 0, nostr.Tags{h("pub")}, snowclaw.ReasonRestricted},
			{fz.owner, 9000, 0, nostr.Tags{h("pub"), p(fz.member)}, ok},
		}, "pub", &pubState},
		{"a removed member may not come back with the code", []step{
			{fz.mod, 9001, 0, nostr.Tags{h("club"), p(fz.member)}, ok},
			{fz.member, 9021, 0, nostr.Tags{h("club"), {"code", "abc"}}, snowclaw.ReasonRestricted},
		}, "club", clubState.with(map[string]string{pub(fz.member): "-"})},
		{"a moderator's put-user brings a removed member back", []step{
			{fz.mod, 9001, 0, nostr.Tags{h("club"), p(fz.member)}, ok},
			{fz.mod, 9000, 0, nostr.Tags{h("club"), p(fz.member)}, ok},
		}, "club", &clubState},
		{"a member who left joins again", []step{
			{fz.member, 9022, 0, nostr.Tags{h("pub")}, ok},
			{fz.member, 9021, 1, nostr.Tags{h("pub")}, ok},
		}, "pub", &pubState},

		// leave requests (9022)
		{"a member leaves", []step{{fz.member, 9022, 0, nostr.Tags{h("club")}, ok}},
			"club", clubState.with(map[string]string{pub(fz.member): "-"})},
		{"the last admin leaves", []step{{fz.creator, 9022, 0, nostr.Tags{h("club")}, ok}},
			"club", clubState.with(map[string]string{pub(fz.creator): "-"})},
		{"a non-member may not leave", []step{{fz.stranger, 9022, 0, nostr.Tags{h("pub")}, snowclaw.ReasonInvalid}}, "pub", &pubState},
		{"leaving a private group one never saw", []step{{fz.stranger, 9022, 0, nostr.Tags{h("club")}, snowclaw.ReasonInvalid}}, "club", &clubState},

		// invites (9009)
		{"a plain member may not create invites", []step{{fz.member, 9009, 0, nostr.Tags{h("club"), {"code", "mine"}}, snowclaw.ReasonRestricted}}, "club", &clubState},
		{"an invite needs a code", []step{{fz.mod, 9009, 0, nostr.Tags{h("club"), {"code", ""}}, snowclaw.ReasonInvalid}}, "club", &clubState},
		{"a new code lets a stranger in", []step{
			{fz.mod, 9009, 0, nostr.Tags{h("club"), {"code", "xyz"}}, ok},
			{fz.stranger, 9021, 0, nostr.Tags{h("club"), {"code", "xyz"}}, ok},
		}, "club", clubState.with(map[string]string{pub(fz.stranger): ""})},

		// kinds this relay does not implement
		{"an unknown moderation kind", []step{{fz.owner, 9003, 0, nostr.Tags{h("club")}, snowclaw.ReasonInvalid}}, "club", &clubState},

		// arrival order, not created_at, decides; a restart must agree
		{"a removal dated before the put-user it follows", []step{
			{fz.mod, 9000, 5, nostr.Tags{h("club"), p(fz.stranger)}, ok},
			{fz.mod, 9001, 2, nostr.Tags{h("club"), p(fz.stranger)}, ok},
		}, "club", &clubState},
		{"a put-user dated before the removal it follows", []step{
			{fz.mod, 9001, 5, nostr.Tags{h("club"), p(fz.member)}, ok},
			{fz.mod, 9000, 2, nostr.Tags{h("club"), p(fz.member)}, ok},
		}, "club", &clubState},
		// (the last put-user differs from setup's by its reason: the same
		// event sent again is a duplicate and changes nothing)
		{"a role change and a removal in one second", []step{
			{fz.creator, 9000, 0, nostr.Tags{h("club"), p(fz.member, "moderator")}, ok},
			{fz.creator, 9001, 0, nostr.Tags{h("club"), p(fz.member)}, ok},
			{fz.creator, 9000, 0, nostr.Tags{h("club"), p(fz.member), {"reason", "back"}}, ok},
		}, "club", &clubState},
		{"the same put-user sent again after a removal changes nothing", []step{
			{fz.creator, 9001, 0, nostr.Tags{h("club"), p(fz.member)}, ok},
			{fz.creator, 9000, 0, nostr.Tags{h("club"), p(fz.member)}, ok},
		}, "club", clubState.with(map[string]string{pub(fz.member): "-"})},
	} {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel() // each row has a store of its own
			ctx := context.Background()
			w := newWorldOn(openBadger(t))
			w.setup(t)
			for i, st := range row.steps {
				reject, msg := w.submit(ctx, signed(t, st.sk, st.kind, w.setupAt+st.dt, st.tags, ""))
				switch {
				case st.want == ok && reject:
					t.Fatalf("step %d (kind %d): refused %s", i, st.kind, msg)
				case st.want != ok && !reject:
					t.Fatalf("step %d (kind %d): accepted, want %s", i, st.kind, st.want)
				case st.want != ok && !strings.HasPrefix(msg, st.want.Prefix()+": "):
					t.Fatalf("step %d (kind %d): %s, want %s", i, st.kind, msg, st.want)
				}
			}
			checkGroup(t, w.groups, row.group, row.want)
			w.checkMetadata(t)
			w.checkRestart(t, false)
		})
	}
}

func checkGroup(t *testing.T, s *groups.Groups, gid string, want *groupWant) {
	t.Helper()
	g, exists := s.Snapshot(gid)
	if want == nil {
		if exists {
			t.Fatalf("group %q exists, want none", gid)
		}
		return
	}
	if !exists {
		t.Fatalf("group %q does not exist", gid)
	}
	members := make(map[string]string, len(g.Members))
	for pk, roles := range g.Members {
		members[pk] = strings.Join(roles, ",")
	}
	if !maps.Equal(members, want.members) {
		t.Errorf("group %q members %v, want %v", gid, named(members), named(want.members))
	}
	if g.GroupInfo != want.info || g.Name != want.name {
		t.Errorf("group %q is %q %+v, want %q %+v", gid, g.Name, g.GroupInfo, want.name, want.info)
	}
}

// named shows members by their role in the world rather than their key.
func named(members map[string]string) map[string]string {
	names := map[string]string{}
	for name, sk := range map[string]string{"owner": fz.owner, "relay": fz.relay, "agent": fz.agent, "creator": fz.creator, "mod": fz.mod, "member": fz.member, "stranger": fz.stranger} {
		names[pub(sk)] = name
	}
	out := make(map[string]string, len(members))
	for pk, roles := range members {
		out[names[pk]] = roles
	}
	return out
}

// TestModerates: who holds moderation powers (and so reads invite codes):
// role holders of that group, the owner and the relay's keys everywhere.
func TestModerates(t *testing.T) {
	w := newWorldOn(openBadger(t))
	w.setup(t)
	for _, row := range []struct {
		group string
		mods  string // who moderates, by name; every other key does not
	}{
		{"pub", "owner relay agent"},
		{"club", "owner relay agent creator mod"},
		{"nosuch", ""},
	} {
		for name, sk := range map[string]string{"owner": fz.owner, "relay": fz.relay, "agent": fz.agent, "creator": fz.creator, "mod": fz.mod, "member": fz.member, "stranger": fz.stranger} {
			want := slices.Contains(strings.Fields(row.mods), name)
			if got := w.groups.Moderates(row.group, pub(sk)); got != want {
				t.Errorf("Moderates(%s, %s) = %v, want %v", row.group, name, got, want)
			}
		}
		if w.groups.Moderates(row.group, "") {
			t.Errorf("Moderates(%s, anonymous) = true", row.group)
		}
	}
}

// TestDeleteEvent: a moderator's delete-event (9005) removes the named
// events of the group and nothing else.
func TestDeleteEvent(t *testing.T) {
	for _, row := range []struct {
		name   string
		sk     string
		group  string
		target func(w *world) string
		want   snowclaw.Reason
		gone   bool // the target is not stored afterwards
	}{
		{"a moderator deletes a message of the group", fz.mod, "club", func(*world) string { return chatClub.ID }, ok, true},
		{"an admin deletes one", fz.creator, "club", func(*world) string { return chatClub.ID }, ok, true},
		{"the owner deletes one in any group", fz.owner, "pub", func(*world) string { return chatPub.ID }, ok, true},
		{"a plain member may not", fz.member, "club", func(*world) string { return chatClub.ID }, snowclaw.ReasonRestricted, false},
		{"another group's message", fz.mod, "club", func(*world) string { return chatPub.ID }, snowclaw.ReasonInvalid, false},
		{"the group's history", fz.mod, "club", func(w *world) string { return firstOf(t, w, snowclaw.KindCreateGroup, "club") }, snowclaw.ReasonInvalid, false},
		{"an id that is not stored", fz.mod, "club", func(*world) string { return strings.Repeat("0", 64) }, ok, true},
	} {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel() // each row has a store of its own
			ctx := context.Background()
			w := newWorldOn(openBadger(t))
			w.setup(t)
			target := row.target(w)
			reject, msg := w.submit(ctx, signed(t, row.sk, snowclaw.KindDeleteEvent, w.setupAt, nostr.Tags{h(row.group), {"e", target}}, ""))
			switch {
			case row.want == ok && reject:
				t.Fatalf("refused: %s", msg)
			case row.want != ok && !strings.HasPrefix(msg, row.want.Prefix()+": "):
				t.Fatalf("answer %q, want %s", msg, row.want)
			}
			if stored := firstOf(t, w, -1, target) != ""; stored == row.gone {
				t.Fatalf("target stored %v, want gone %v", stored, row.gone)
			}
			w.checkRestart(t, false)
		})
	}
}

// firstOf is the id of the first stored event of kind in group, or with
// kind -1 the id itself if that event is stored; "" when none is.
func firstOf(t *testing.T, w *world, kind int, key string) string {
	t.Helper()
	f := nostr.Filter{Kinds: []int{kind}, Tags: nostr.TagMap{"h": {key}}}
	if kind < 0 {
		f = nostr.Filter{IDs: []string{key}}
	}
	ch, err := w.store.QueryEvents(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	id := ""
	for evt := range ch {
		id = evt.ID
	}
	return id
}

// TestHiddenLikeMissing: whoever may not know a hidden group exists gets,
// for every NIP-29 kind, the answer a missing group gets (docs/security.md,
// "Hidden groups").
func TestHiddenLikeMissing(t *testing.T) {
	ctx := context.Background()
	w := newWorldOn(openBadger(t))
	w.setup(t)
	if reject, msg := w.submit(ctx, signed(t, fz.creator, snowclaw.KindEditMetadata, w.setupAt, nostr.Tags{h("club"), {"hidden"}, {"private"}, {"restricted"}, {"closed"}}, "")); reject {
		t.Fatal(msg)
	}
	answer := func(kind int, g string) string {
		tags := nostr.Tags{h(g), p(fz.stranger), {"e", chatClub.ID}, {"code", "nope"}}
		reject, msg := w.submit(ctx, signed(t, fz.stranger, kind, w.setupAt, tags, ""))
		if !reject {
			t.Fatalf("kind %d on %s by a stranger accepted", kind, g)
		}
		return strings.ReplaceAll(msg, g, "G")
	}
	// not 9007: strangers may not create groups, and a creator who picks
	// a hidden group's id is told duplicate (the known limit)
	for _, kind := range []int{9000, 9001, 9002, 9005, 9008, 9009, 9010, 9021, 9022} {
		if hidden, missing := answer(kind, "club"), answer(kind, "nosuch"); hidden != missing {
			t.Errorf("kind %d: hidden group %q, missing group %q", kind, hidden, missing)
		}
	}
	checkGroup(t, w.groups, "club", clubState.flags(policies.GroupInfo{Private: true, Restricted: true, Closed: true, Hidden: true}))
}

// TestReadRuleOverState: the read rule asked of the plugin's own state as
// it changes: joining, being removed, leaving and hiding a group decide
// who reads the club's message and its metadata.
func TestReadRuleOverState(t *testing.T) {
	chat := &nostr.Event{PubKey: pub(fz.creator), Kind: snowclaw.KindChat, Tags: nostr.Tags{h("club")}}
	meta := &nostr.Event{PubKey: pub(fz.relay), Kind: snowclaw.KindGroupMetadata, Tags: nostr.Tags{{"d", "club"}}}
	for _, row := range []struct {
		name      string
		steps     []step
		readsChat string // who reads chat, by name
		readsMeta string // who reads club's 39000
	}{
		{"after setup", nil, "relay agent creator mod member", "anonymous owner relay agent creator mod member stranger"},
		{"a stranger joins with the code", []step{{fz.stranger, 9021, 0, nostr.Tags{h("club"), {"code", "abc"}}, ok}},
			"relay agent creator mod member stranger", "anonymous owner relay agent creator mod member stranger"},
		{"a moderator removes the member", []step{{fz.mod, 9001, 0, nostr.Tags{h("club"), p(fz.member)}, ok}},
			"relay agent creator mod", "anonymous owner relay agent creator mod member stranger"},
		{"the moderator leaves", []step{{fz.mod, 9022, 0, nostr.Tags{h("club")}, ok}},
			"relay agent creator member", "anonymous owner relay agent creator mod member stranger"},
		{"the group is hidden", []step{{fz.creator, 9002, 0, nostr.Tags{h("club"), {"hidden"}}, ok}},
			"relay agent creator mod member", "owner relay agent creator mod member"},
		{"the group is made public", []step{{fz.creator, 9002, 0, nostr.Tags{h("club"), {"public"}}, ok}},
			"anonymous owner relay agent creator mod member stranger", "anonymous owner relay agent creator mod member stranger"},
		// the message outlives the group only in memory: its author reads it
		{"the group is deleted", []step{{fz.creator, 9008, 0, nostr.Tags{h("club")}, ok}},
			"relay agent creator", "anonymous owner relay agent creator mod member stranger"},
	} {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel() // each row has a store of its own
			ctx := context.Background()
			w := newWorldOn(openBadger(t))
			w.setup(t)
			for i, st := range row.steps {
				if reject, msg := w.submit(ctx, signed(t, st.sk, st.kind, w.setupAt+st.dt, st.tags, "")); reject {
					t.Fatalf("step %d (kind %d): refused %s", i, st.kind, msg)
				}
			}
			v := &policies.Visibility{IDs: options(w.store).IDs, Groups: w.groups}
			readers := map[string]string{"anonymous": ""}
			for name, sk := range map[string]string{"owner": fz.owner, "relay": fz.relay, "agent": fz.agent, "creator": fz.creator, "mod": fz.mod, "member": fz.member, "stranger": fz.stranger} {
				readers[name] = pub(sk)
			}
			for what, c := range map[string]struct {
				evt *nostr.Event
				may string
			}{"the club's message": {chat, row.readsChat}, "the club's metadata": {meta, row.readsMeta}} {
				for name, pk := range readers {
					want := slices.Contains(strings.Fields(c.may), name)
					if got, why := v.CanRead(pk, snowclaw.ReadEvent(c.evt)); got != want {
						t.Errorf("%s: CanRead(%s) = %v (%s), want %v", what, name, got, why, want)
					}
				}
			}
		})
	}
}
