package node_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/testwait"
)

// The NIP-29 clauses as the current text has them (docs/access.md,
// "NIP-29, clause by clause"), each over a real socket, on badger and
// over PostgreSQL.

// flagsOf are the NIP-29 flags a 39000 says are on, sorted.
func flagsOf(meta *nostr.Event) []string {
	var out []string
	for _, f := range []string{"private", "restricted", "hidden", "closed"} {
		if hasFlag(meta, f) {
			out = append(out, f)
		}
	}
	return out
}

func tagValue(evt *nostr.Event, name string) string {
	if t := evt.Tags.Find(name); len(t) >= 2 {
		return t[1]
	}
	return ""
}

// waitMeta waits until the 39000 of g, read by the owner, satisfies ok.
func (e *testEnv) waitMeta(g, what string, ok func(*nostr.Event) bool) *nostr.Event {
	e.t.Helper()
	var m *nostr.Event
	testwait.For(e.t, what, func() bool {
		m = e.groupMeta(&e.owner, 39000, g)
		return m != nil && ok(m)
	})
	return m
}

// TestNIP29_EditStatesEveryFlag: a 9002 that names any flag states them
// all, an absent flag meaning its opposite, through every one of the 16
// combinations and back; one that names none (a rename) keeps them;
// banner is basic metadata; a flag and its opposite together are invalid.
func TestNIP29_EditStatesEveryFlag(t *testing.T) {
	e := startEnv(t)
	c := e.connect(nil)
	e.mustPublish(c, mkEvent(e.owner, 9007, nostr.Tags{{"h", "room"}, {"name", "Room"}}, ""))
	// welshman's edit when Flotilla reopens a room: public, open by omission
	e.mustPublish(c, mkEvent(e.owner, 9002, nostr.Tags{{"h", "room"}, {"name", "Room"}, {"restricted"}, {"d", "room"}, {"public"}}, ""))
	e.waitMeta("room", "the reopened room", func(m *nostr.Event) bool { return slices.Equal(flagsOf(m), []string{"restricted"}) })

	names := []string{"private", "restricted", "hidden", "closed"}
	opposites := []string{"public", "unrestricted", "visible", "open"}
	for round, combo := range append(seq(16), 0) {
		tags := nostr.Tags{{"h", "room"}, {"name", "Room"}, {"banner", "https://x.test/b.png"}, {"reason", fmt.Sprint(round)}}
		var want []string
		for i, name := range names {
			switch {
			case combo&(1<<i) != 0:
				tags = append(tags, nostr.Tag{name})
				want = append(want, name)
			case round%2 == 1 || combo == 0:
				// half the rounds also name the opposite, as older
				// clients do; the other half leave it out (but for
				// no flag on: an edit naming no flag keeps them)
				tags = append(tags, nostr.Tag{opposites[i]})
			}
		}
		e.mustPublish(c, mkEvent(e.owner, 9002, tags, ""))
		m := e.waitMeta("room", fmt.Sprintf("flags %v", want), func(m *nostr.Event) bool { return slices.Equal(flagsOf(m), want) })
		if tagValue(m, "banner") != "https://x.test/b.png" {
			t.Fatalf("round %d: 39000 has no banner: %v", round, m.Tags)
		}
		if hasFlag(m, "public") == slices.Contains(want, "private") || hasFlag(m, "open") == slices.Contains(want, "closed") {
			t.Fatalf("round %d: 39000 %v states public/open against its flags %v", round, m.Tags, want)
		}
	}

	// a rename without flags keeps them (the room is now none of them:
	// make it private and closed first)
	e.mustPublish(c, mkEvent(e.owner, 9002, nostr.Tags{{"h", "room"}, {"name", "Room"}, {"private"}, {"restricted"}, {"closed"}}, ""))
	e.mustPublish(c, mkEvent(e.owner, 9002, nostr.Tags{{"h", "room"}, {"name", "Renamed"}}, ""))
	m := e.waitMeta("room", "the renamed room", func(m *nostr.Event) bool { return tagValue(m, "name") == "Renamed" })
	if got := flagsOf(m); !slices.Equal(got, []string{"private", "restricted", "closed"}) {
		t.Fatalf("a rename changed the flags to %v", got)
	}
	// welshman's edit when Flotilla makes the room public and open
	// again, then private: it copies the relay's "public" and "open"
	// back beside the flags the admin set, and the flag wins
	e.mustPublish(c, mkEvent(e.owner, 9002, nostr.Tags{{"h", "room"}, {"name", "Room"}, {"restricted"}, {"d", "room"}, {"public"}, {"open"}}, ""))
	e.waitMeta("room", "the room public and open", func(m *nostr.Event) bool { return slices.Equal(flagsOf(m), []string{"restricted"}) })
	e.mustPublish(c, mkEvent(e.owner, 9002, nostr.Tags{{"h", "room"}, {"name", "Room"}, {"private"}, {"restricted"}, {"d", "room"}, {"public"}, {"open"}}, ""))
	e.waitMeta("room", "the room private again", func(m *nostr.Event) bool {
		return slices.Equal(flagsOf(m), []string{"private", "restricted"}) && !hasFlag(m, "public") && hasFlag(m, "open")
	})
	e.refusedWith(c, mkEvent(e.owner, 9002, nostr.Tags{{"h", "room"}, {"encrypted"}, {"unencrypted"}}, ""), "invalid:")
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// TestNIP29_UnrestrictedGroupTakesAnyonesPost: without "restricted"
// anyone may write to a group, member or not; with it only members.
func TestNIP29_UnrestrictedGroupTakesAnyonesPost(t *testing.T) {
	e := startEnv(t)
	c := e.connect(nil)
	stranger := newUser()
	e.mustPublish(c, mkEvent(e.owner, 9007, nostr.Tags{{"h", "forum"}}, ""))
	e.refusedWith(c, mkEvent(stranger, 9, nostr.Tags{{"h", "forum"}}, "hello?"), "restricted:")
	e.mustPublish(c, mkEvent(e.owner, 9002, nostr.Tags{{"h", "forum"}, {"public"}, {"open"}}, ""))
	post := e.mustPublish(c, mkEvent(stranger, 9, nostr.Tags{{"h", "forum"}}, "hello"))
	if got, _ := fetch(t, e.connect(nil), nostr.Filter{IDs: []string{post.ID}}); len(got) != 1 {
		t.Fatalf("the stranger's post in a public unrestricted group: %d served", len(got))
	}
	// but not someone a moderator removed, until a moderator lets them
	e.mustPublish(c, mkEvent(e.owner, 9001, nostr.Tags{{"h", "forum"}, {"p", stranger.pk}}, ""))
	e.refusedWith(c, mkEvent(stranger, 9, nostr.Tags{{"h", "forum"}}, "me again"), "restricted:")
	e.mustPublish(c, mkEvent(e.owner, 9000, nostr.Tags{{"h", "forum"}, {"p", stranger.pk}}, ""))
	e.mustPublish(c, mkEvent(stranger, 9, nostr.Tags{{"h", "forum"}}, "thanks"))
}

// TestNIP29_RemovedMemberWaitsForAModerator: in an open group a member a
// moderator removed does not walk back in: their join is refused as
// pending and kept for the group's admins to read, their posts are
// refused, and a moderator's put-user brings them back.
func TestNIP29_RemovedMemberWaitsForAModerator(t *testing.T) {
	e := startEnv(t)
	alice := newUser()
	c := e.connect(nil)
	e.mustPublish(c, mkEvent(e.owner, 9007, nostr.Tags{{"h", "lobby"}, {"public"}}, ""))
	e.mustPublish(c, mkEvent(alice, 9021, nostr.Tags{{"h", "lobby"}}, ""))
	e.waitMembers("lobby", e.owner.pk, alice.pk)
	e.mustPublish(c, mkEvent(e.owner, 9001, nostr.Tags{{"h", "lobby"}, {"p", alice.pk}}, ""))
	e.waitMembers("lobby", e.owner.pk)

	again := mkEvent(alice, 9021, nostr.Tags{{"h", "lobby"}}, "sorry, let me back in")
	err := publish(c, again)
	if err == nil || !strings.Contains(err.Error(), "msg: restricted: ") || !strings.Contains(err.Error(), "pending") {
		t.Fatalf("a removed member's join: %v, want restricted: … pending", err)
	}
	// sent again, the same request is still pending, not "duplicate"
	if err := publish(c, again); err == nil || !strings.Contains(err.Error(), "pending") {
		t.Fatalf("the same join sent again: %v, want pending", err)
	}
	e.refusedWith(c, mkEvent(alice, 9, nostr.Tags{{"h", "lobby"}}, "I'm back"), "restricted:")
	e.waitMembers("lobby", e.owner.pk)
	pending, _ := fetch(t, e.connect(&e.owner), nostr.Filter{Kinds: []int{9021}, Tags: nostr.TagMap{"h": {"lobby"}}, Authors: []string{alice.pk}})
	if !contains(pending, again.ID) {
		t.Fatalf("the admin cannot read the pending request: %v", ids(pending))
	}
	answers, _ := fetch(t, e.connect(&e.owner), nostr.Filter{Kinds: []int{9000}, Authors: []string{e.relay.pk}, Tags: nostr.TagMap{"p": {alice.pk}}})
	if len(answers) != 1 {
		t.Fatalf("the relay answered %d joins of alice with a put-user, want only the first", len(answers))
	}

	e.mustPublish(c, mkEvent(e.owner, 9000, nostr.Tags{{"h", "lobby"}, {"p", alice.pk}}, ""))
	e.waitMembers("lobby", e.owner.pk, alice.pk)
	e.mustPublish(c, mkEvent(alice, 9, nostr.Tags{{"h", "lobby"}}, "thanks"))
	e.restart()
	e.waitMembers("lobby", e.owner.pk, alice.pk)
}

// TestNIP29_HiddenIsNotClosed: a hidden group that is not closed takes a
// join without a code; hidden only keeps its metadata from non-members.
func TestNIP29_HiddenIsNotClosed(t *testing.T) {
	e := startEnv(t)
	bob, eve := newUser(), newUser()
	c := e.connect(nil)
	e.mustPublish(c, mkEvent(e.owner, 9007, nostr.Tags{{"h", "den"}}, ""))
	e.mustPublish(c, mkEvent(e.owner, 9002, nostr.Tags{{"h", "den"}, {"private"}, {"restricted"}, {"hidden"}}, ""))
	e.mustPublish(c, mkEvent(bob, 9021, nostr.Tags{{"h", "den"}}, ""))
	e.waitMembers("den", e.owner.pk, bob.pk)
	if m := e.groupMeta(&eve, 39000, "den"); m != nil {
		t.Fatal("a hidden group's 39000 served to a non-member")
	}
	if m := e.groupMeta(&bob, 39000, "den"); m == nil || !hasFlag(m, "hidden") || hasFlag(m, "closed") {
		t.Fatalf("the member's 39000: %v", m)
	}
}

// TestNIP29_LatePublication: a group event dated two days ago is refused
// unless the relay is open to receive a moved group; an event outside any
// group is not judged by this rule.
func TestNIP29_LatePublication(t *testing.T) {
	twoDaysAgo := nostr.Timestamp(time.Now().Add(-48 * time.Hour).Unix())
	e := startEnv(t)
	c := e.connect(nil)
	e.mustPublish(c, mkEvent(e.owner, 9007, nostr.Tags{{"h", "club"}}, ""))
	e.refusedWith(c, signedAt(e.owner, twoDaysAgo, 9, nostr.Tags{{"h", "club"}}, "from the old relay"), "invalid:")
	e.refusedWith(c, signedAt(e.owner, twoDaysAgo, 9000, nostr.Tags{{"h", "club"}, {"p", newUser().pk}}, ""), "invalid:")
	e.mustPublish(c, signedAt(e.owner, twoDaysAgo, 1, nil, "an old note, in no group"))

	moved := startEnv(t, func(o *node.Options) { o.AcceptMovedGroups = true })
	mc := moved.connect(nil)
	moved.mustPublish(mc, mkEvent(moved.owner, 9007, nostr.Tags{{"h", "club"}}, ""))
	old := moved.mustPublish(mc, signedAt(moved.owner, twoDaysAgo, 9, nostr.Tags{{"h", "club"}}, "from the old relay"))
	if got, _ := fetch(t, moved.connect(&moved.owner), nostr.Filter{IDs: []string{old.ID}}); len(got) != 1 {
		t.Fatal("the moved group's old message is not served")
	}
}

// TestNIP29_TimelineReferences: a previous tag must name events this relay
// has in the group (by their first 8 hex characters).
func TestNIP29_TimelineReferences(t *testing.T) {
	e := startEnv(t)
	alice := newUser()
	c := e.connect(nil)
	e.mustPublish(c, mkEvent(e.owner, 9007, nostr.Tags{{"h", "club"}, {"public"}}, ""))
	e.mustPublish(c, mkEvent(alice, 9021, nostr.Tags{{"h", "club"}}, ""))
	first := e.mustPublish(c, mkEvent(e.owner, 9, nostr.Tags{{"h", "club"}}, "first"))
	elsewhere := e.mustPublish(c, mkEvent(e.owner, 1, nil, "not in the group"))
	e.mustPublish(c, mkEvent(alice, 9, nostr.Tags{{"h", "club"}, {"previous", first.ID[:8]}}, "replying"))
	e.refusedWith(c, mkEvent(alice, 9, nostr.Tags{{"h", "club"}, {"previous", first.ID[:8], "00000000"}}, "out of context"), "invalid:")
	e.refusedWith(c, mkEvent(alice, 9, nostr.Tags{{"h", "club"}, {"previous", elsewhere.ID[:8]}}, "another group's"), "invalid:")
	e.refusedWith(c, mkEvent(alice, 9, nostr.Tags{{"h", "club"}, {"previous", "XYZ"}}, "malformed"), "invalid:")
}

// TestNIP29_Pins: update-pin-list (9010) carries the whole list; the
// relay mirrors it in its 39005 in the order given; only moderators pin,
// only the group's events, at most 50.
func TestNIP29_Pins(t *testing.T) {
	e := startEnv(t)
	alice := newUser()
	c := e.connect(nil)
	e.mustPublish(c, mkEvent(e.owner, 9007, nostr.Tags{{"h", "club"}, {"public"}}, ""))
	e.mustPublish(c, mkEvent(alice, 9021, nostr.Tags{{"h", "club"}}, ""))
	one := e.mustPublish(c, mkEvent(alice, 9, nostr.Tags{{"h", "club"}}, "one"))
	two := e.mustPublish(c, mkEvent(alice, 9, nostr.Tags{{"h", "club"}}, "two"))
	outside := e.mustPublish(c, mkEvent(alice, 1, nil, "outside"))
	addr := "30023:" + alice.pk + ":article"

	pinsNow := func(what string, want ...string) {
		t.Helper()
		testwait.For(t, what, func() bool {
			m := e.groupMeta(&alice, 39005, "club")
			if m == nil {
				return false
			}
			var got []string
			for _, tag := range m.Tags {
				if len(tag) >= 2 && (tag[0] == "e" || tag[0] == "a") {
					got = append(got, tag[1])
				}
			}
			return slices.Equal(got, want)
		})
	}
	e.mustPublish(c, mkEvent(e.owner, 9010, nostr.Tags{{"h", "club"}, {"e", two.ID}, {"a", addr}, {"e", one.ID}}, ""))
	pinsNow("pins two, the article, one", two.ID, addr, one.ID)
	e.mustPublish(c, mkEvent(e.owner, 9010, nostr.Tags{{"h", "club"}, {"e", one.ID}}, ""))
	pinsNow("pins one", one.ID)
	e.refusedWith(c, mkEvent(alice, 9010, nostr.Tags{{"h", "club"}, {"e", two.ID}}, ""), "restricted:")
	e.refusedWith(c, mkEvent(e.owner, 9010, nostr.Tags{{"h", "club"}, {"e", outside.ID}}, ""), "invalid:")
	e.refusedWith(c, mkEvent(e.owner, 9010, nostr.Tags{{"h", "club"}, {"e", "nothex"}}, ""), "invalid:")
	many := nostr.Tags{{"h", "club"}}
	for range 51 {
		many = append(many, nostr.Tag{"e", one.ID})
	}
	e.refusedWith(c, mkEvent(e.owner, 9010, many, ""), "invalid:")
	e.mustPublish(c, mkEvent(e.owner, 9010, nostr.Tags{{"h", "club"}}, "unpin all"))
	pinsNow("no pins")
	e.refusedWith(c, mkEvent(alice, 39005, nostr.Tags{{"d", "club"}, {"e", two.ID}}, ""), "restricted:")
}

// TestNIP29_Subgroups: a 9002 with a parent tag makes a subgroup; the
// parent's 39000 lists its children in order; the MUST-reject rules
// hold; a deleted parent leaves its children roots.
func TestNIP29_Subgroups(t *testing.T) {
	e := startEnv(t)
	alice := newUser()
	c := e.connect(nil)
	for _, g := range []string{"tech", "nostr", "go"} {
		e.mustPublish(c, mkEvent(e.owner, 9007, nostr.Tags{{"h", g}, {"name", g}, {"public"}}, ""))
	}
	// alice is admin of "mine" but not of tech
	e.mustPublish(c, mkEvent(e.owner, 9007, nostr.Tags{{"h", "mine"}, {"public"}}, ""))
	e.mustPublish(c, mkEvent(e.owner, 9000, nostr.Tags{{"h", "mine"}, {"p", alice.pk, "admin"}}, ""))

	e.mustPublish(c, mkEvent(e.owner, 9002, nostr.Tags{{"h", "nostr"}, {"name", "nostr"}, {"parent", "tech"}}, ""))
	e.mustPublish(c, mkEvent(e.owner, 9002, nostr.Tags{{"h", "go"}, {"name", "go"}, {"parent", "tech"}}, ""))
	children := func(m *nostr.Event) []string {
		var out []string
		for _, tag := range m.Tags {
			if len(tag) >= 2 && tag[0] == "child" {
				out = append(out, tag[1])
			}
		}
		return out
	}
	e.waitMeta("tech", "tech's children nostr, go", func(m *nostr.Event) bool { return slices.Equal(children(m), []string{"nostr", "go"}) })
	if m := e.waitMeta("nostr", "nostr under tech", func(m *nostr.Event) bool { return tagValue(m, "parent") == "tech" }); hasFlag(m, "private") {
		t.Fatalf("the subgroup's edit changed its flags: %v", m.Tags)
	}

	// a rename from a client that knows nothing of subgroups (no flag,
	// no parent, no child: NDK's setMetadata) leaves the tree alone
	e.mustPublish(c, mkEvent(e.owner, 9002, nostr.Tags{{"h", "tech"}, {"name", "Tech"}}, ""))
	e.mustPublish(c, mkEvent(e.owner, 9002, nostr.Tags{{"h", "nostr"}, {"name", "Nostr"}}, ""))
	e.waitMeta("nostr", "nostr renamed, still under tech", func(m *nostr.Event) bool {
		return tagValue(m, "name") == "Nostr" && tagValue(m, "parent") == "tech"
	})
	// every edit of a parent that states the tree lists all its
	// children; the order is its own
	e.refusedWith(c, mkEvent(e.owner, 9002, nostr.Tags{{"h", "tech"}, {"name", "Tech"}, {"public"}}, ""), "invalid:")
	e.refusedWith(c, mkEvent(e.owner, 9002, nostr.Tags{{"h", "tech"}, {"name", "Tech"}, {"child", "go"}}, ""), "invalid:")
	e.mustPublish(c, mkEvent(e.owner, 9002, nostr.Tags{{"h", "tech"}, {"name", "Tech"}, {"child", "go"}, {"child", "nostr"}}, ""))
	e.waitMeta("tech", "tech's children reordered", func(m *nostr.Event) bool { return slices.Equal(children(m), []string{"go", "nostr"}) })

	// cycles, self-reference, a missing parent, two parents
	e.refusedWith(c, mkEvent(e.owner, 9002, nostr.Tags{{"h", "tech"}, {"name", "Tech"}, {"parent", "nostr"}, {"child", "go"}, {"child", "nostr"}}, ""), "invalid:")
	e.refusedWith(c, mkEvent(e.owner, 9002, nostr.Tags{{"h", "go"}, {"parent", "go"}}, ""), "invalid:")
	e.refusedWith(c, mkEvent(e.owner, 9002, nostr.Tags{{"h", "go"}, {"parent", "nosuch"}}, ""), "invalid:")
	e.refusedWith(c, mkEvent(e.owner, 9002, nostr.Tags{{"h", "go"}, {"parent", "tech"}, {"parent", "mine"}}, ""), "invalid:")
	// the author must be an admin of the parent too
	e.refusedWith(c, mkEvent(alice, 9002, nostr.Tags{{"h", "mine"}, {"parent", "tech"}}, ""), "restricted:")

	// an edit stating the tree without a parent tag makes a root; so
	// does deleting the parent
	e.mustPublish(c, mkEvent(e.owner, 9002, nostr.Tags{{"h", "go"}, {"name", "go"}, {"public"}}, ""))
	e.waitMeta("tech", "tech's one child", func(m *nostr.Event) bool { return slices.Equal(children(m), []string{"nostr"}) })
	e.mustPublish(c, mkEvent(e.owner, 9008, nostr.Tags{{"h", "tech"}}, ""))
	e.waitMeta("nostr", "nostr a root", func(m *nostr.Event) bool { return tagValue(m, "parent") == "" })

	// NIP-11 says so
	doc, _ := e.nip11("application/nostr+json")
	var nip29 struct {
		Subgroups bool `json:"subgroups"`
	}
	if err := json.Unmarshal(doc["nip29"], &nip29); err != nil || !nip29.Subgroups {
		t.Fatal(`NIP-11 does not advertise "nip29": {"subgroups": true}`)
	}
}

// TestNIP29_UnknownModerationKind: a moderation kind this relay does not
// implement is refused with a NIP-01 prefix.
func TestNIP29_UnknownModerationKind(t *testing.T) {
	e := startEnv(t)
	c := e.connect(nil)
	e.mustPublish(c, mkEvent(e.owner, 9007, nostr.Tags{{"h", "club"}}, ""))
	e.refusedWith(c, mkEvent(e.owner, 9003, nostr.Tags{{"h", "club"}}, ""), "invalid:")
}

// TestAttack_PinsOfAHiddenGroup: the 39005 of a hidden group is metadata
// like its 39000: a stranger gets what a missing group gives (nothing),
// its members read it; and a moderator cannot pin, and so learn the
// existence of, another private group's event they may not read.
func TestAttack_PinsOfAHiddenGroup(t *testing.T) {
	e := startEnv(t)
	mod, stranger := newUser(), newUser()
	c := e.connect(nil)
	e.mustPublish(c, mkEvent(e.owner, 9007, nostr.Tags{{"h", "den"}, {"private"}, {"hidden"}, {"closed"}}, ""))
	e.mustPublish(c, mkEvent(e.owner, 9007, nostr.Tags{{"h", "vault"}, {"private"}, {"closed"}}, ""))
	e.mustPublish(c, mkEvent(e.owner, 9000, nostr.Tags{{"h", "den"}, {"p", mod.pk, "moderator"}}, ""))
	secret := e.mustPublish(c, mkEvent(e.owner, 9, nostr.Tags{{"h", "vault"}}, "vault only"))
	// the pins are checked against what the sender's connection may read
	mc := e.connect(&mod)
	pinned := e.mustPublish(mc, mkEvent(mod, 9, nostr.Tags{{"h", "den"}}, "read me first"))
	e.mustPublish(mc, mkEvent(mod, 9010, nostr.Tags{{"h", "den"}, {"e", pinned.ID}}, ""))
	testwait.For(t, "the den's 39005, read by its moderator", func() bool {
		m := e.groupMeta(&mod, 39005, "den")
		return m != nil && tagValue(m, "e") == pinned.ID
	})
	for _, u := range []*user{&stranger, nil} {
		got, closed := fetch(t, e.connect(u), nostr.Filter{Kinds: []int{39005}, Tags: nostr.TagMap{"d": {"den"}}})
		missing, mclosed := fetch(t, e.connect(u), nostr.Filter{Kinds: []int{39005}, Tags: nostr.TagMap{"d": {"nosuch"}}})
		if len(got) != 0 || len(missing) != 0 || closed != mclosed {
			t.Fatalf("%s reads a hidden group's pins: %d events, CLOSED %q (a missing group: %d, %q)", whoName(u), len(got), closed, len(missing), mclosed)
		}
	}
	// the vault's event is answered as absent, like one that does not exist
	unknown := strings.Repeat("ab", 32)
	e.refusedWith(mc, mkEvent(mod, 9010, nostr.Tags{{"h", "den"}, {"e", secret.ID}}, ""), "invalid: event "+secret.ID+" is not in group den")
	e.refusedWith(mc, mkEvent(mod, 9010, nostr.Tags{{"h", "den"}, {"e", unknown}}, ""), "invalid: event "+unknown+" is not in group den")
}
