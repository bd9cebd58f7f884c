package node_test

import (
	"slices"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/internal/testwait"
)

// groupMeta fetches the relay-signed metadata event of kind k for group g.
func (e *testEnv) groupMeta(reader *user, k int, g string) *nostr.Event {
	e.t.Helper()
	got, closed := fetch(e.t, e.connect(reader), nostr.Filter{Kinds: []int{k}, Authors: []string{e.relay.pk}, Tags: nostr.TagMap{"d": {g}}})
	if closed != "" {
		e.t.Fatalf("metadata %d of %s: CLOSED %s", k, g, closed)
	}
	if len(got) == 0 {
		return nil
	}
	return got[0]
}

func hasFlag(evt *nostr.Event, flag string) bool {
	for _, t := range evt.Tags {
		if len(t) >= 1 && t[0] == flag {
			return true
		}
	}
	return false
}

func pTags(evt *nostr.Event) []string {
	var out []string
	for _, t := range evt.Tags {
		if len(t) >= 2 && t[0] == "p" {
			out = append(out, t[1])
		}
	}
	return out
}

// waitMembers polls until the 39002 of g lists exactly want (metadata is
// published right after the event that changed it is acknowledged).
func (e *testEnv) waitMembers(g string, want ...string) {
	e.t.Helper()
	slices.Sort(want)
	var got []string
	if !testwait.Until(testwait.DefaultTimeout, func() bool {
		if m := e.groupMeta(&e.agent, 39002, g); m != nil {
			got = pTags(m)
			slices.Sort(got)
		}
		return slices.Equal(got, want)
	}) {
		e.t.Fatalf("members of %s = %v, want %v", g, got, want)
	}
}

func TestGroups_Lifecycle(t *testing.T) {
	e := startEnv(t)
	alice, bob, carol, mallory := newUser(), newUser(), newUser(), newUser()
	c := e.connect(nil)
	e.mustPublish(c, mkEvent(e.owner, 9007, nostr.Tags{{"h", "team"}, {"name", "The Team"}}, ""))
	e.waitMembers("team", e.owner.pk)
	meta := e.groupMeta(&e.agent, 39000, "team")
	if meta == nil || meta.PubKey != e.relay.pk || meta.Tags.Find("name")[1] != "The Team" || !hasFlag(meta, "private") {
		t.Fatalf("39000 = %v", meta)
	}

	// open group: join is accepted, a second join is a duplicate
	e.mustPublish(c, mkEvent(alice, 9021, nostr.Tags{{"h", "team"}}, "let me in"))
	e.waitMembers("team", e.owner.pk, alice.pk)
	e.refusedWith(c, mkEvent(alice, 9021, nostr.Tags{{"h", "team"}}, "again"), "duplicate:")
	answer, _ := fetch(t, e.connect(&e.agent), nostr.Filter{Kinds: []int{9000}, Authors: []string{e.relay.pk}, Tags: nostr.TagMap{"p": {alice.pk}}})
	if len(answer) != 1 {
		t.Fatalf("relay answered the join with %d put-user events, want 1", len(answer))
	}

	// roles: the owner (admin) makes alice a moderator; a moderator adds
	// plain members but cannot grant roles
	e.mustPublish(c, mkEvent(e.owner, 9000, nostr.Tags{{"h", "team"}, {"p", alice.pk, "moderator"}}, ""))
	e.mustPublish(c, mkEvent(alice, 9000, nostr.Tags{{"h", "team"}, {"p", bob.pk}}, ""))
	e.refusedWith(c, mkEvent(alice, 9000, nostr.Tags{{"h", "team"}, {"p", carol.pk, "admin"}}, ""), "restricted:")
	e.refusedWith(c, mkEvent(bob, 9000, nostr.Tags{{"h", "team"}, {"p", carol.pk}}, ""), "restricted:")
	e.waitMembers("team", e.owner.pk, alice.pk, bob.pk)
	admins := e.groupMeta(&e.agent, 39001, "team")
	if !slices.Contains(pTags(admins), alice.pk) || !slices.Contains(pTags(admins), e.owner.pk) || slices.Contains(pTags(admins), bob.pk) {
		t.Fatalf("39001 = %v", admins.Tags)
	}
	if roles := e.groupMeta(&e.agent, 39003, "team"); roles == nil || roles.Tags.Find("role") == nil {
		t.Fatal("no 39003 roles")
	}

	// a moderator deletes bob's message; it stays deleted
	msg := e.mustPublish(c, mkEvent(bob, 9, nostr.Tags{{"h", "team"}}, "spam"))
	e.refusedWith(c, mkEvent(bob, 9005, nostr.Tags{{"h", "team"}, {"e", msg.ID}}, ""), "restricted:")
	e.mustPublish(c, mkEvent(alice, 9005, nostr.Tags{{"h", "team"}, {"e", msg.ID}}, ""))
	if got, _ := fetch(t, e.connect(&bob), nostr.Filter{IDs: []string{msg.ID}}); len(got) != 0 {
		t.Fatal("deleted message still served")
	}
	e.refusedWith(c, msg, "blocked:")

	// closed group: join needs an invite code
	e.mustPublish(c, mkEvent(e.owner, 9002, nostr.Tags{{"h", "team"}, {"name", "The Team"}, {"private"}, {"restricted"}, {"closed"}, {"about", "closed now"}}, ""))
	e.refusedWith(c, mkEvent(carol, 9021, nostr.Tags{{"h", "team"}}, ""), "restricted:")
	e.mustPublish(c, mkEvent(alice, 9009, nostr.Tags{{"h", "team"}, {"code", "sesame"}}, ""))
	e.refusedWith(c, mkEvent(carol, 9021, nostr.Tags{{"h", "team"}, {"code", "wrong"}}, "x"), "restricted:")
	e.mustPublish(c, mkEvent(carol, 9021, nostr.Tags{{"h", "team"}, {"code", "sesame"}}, "y"))
	e.waitMembers("team", e.owner.pk, alice.pk, bob.pk, carol.pk)

	// leave and remove
	e.mustPublish(c, mkEvent(carol, 9022, nostr.Tags{{"h", "team"}}, ""))
	e.refusedWith(c, mkEvent(carol, 9, nostr.Tags{{"h", "team"}}, "still here?"), "restricted:")
	e.mustPublish(c, mkEvent(alice, 9001, nostr.Tags{{"h", "team"}, {"p", bob.pk}}, ""))
	e.refusedWith(c, mkEvent(alice, 9001, nostr.Tags{{"h", "team"}, {"p", e.owner.pk}}, ""), "restricted:")
	e.waitMembers("team", e.owner.pk, alice.pk)

	// hidden: metadata disappears for non-members
	e.mustPublish(c, mkEvent(e.owner, 9002, nostr.Tags{{"h", "team"}, {"name", "The Team"}, {"private"}, {"restricted"}, {"closed"}, {"hidden"}}, ""))
	// the new 39000 is published after the OK: wait until a member sees
	// it, then the non-member's view is the hidden one
	var m *nostr.Event
	testwait.For(t, "the hidden 39000, read by a member", func() bool {
		m = e.groupMeta(&alice, 39000, "team")
		return m != nil && hasFlag(m, "hidden")
	})
	if !hasFlag(m, "closed") {
		t.Fatalf("member sees 39000 %v", m)
	}
	if m := e.groupMeta(&mallory, 39000, "team"); m != nil {
		t.Fatal("hidden group metadata served to a non-member")
	}

	// late publication of moderation is refused
	late := mkEvent(e.owner, 9000, nostr.Tags{{"h", "team"}, {"p", mallory.pk}}, "")
	late.CreatedAt = nostr.Now() - 2*3600
	late.Sign(e.owner.sk)
	e.refusedWith(c, late, "invalid:")

	// state survives a restart
	e.restart()
	c = e.connect(nil)
	e.mustPublish(c, mkEvent(alice, 9, nostr.Tags{{"h", "team"}}, "still a member"))
	e.refusedWith(c, mkEvent(bob, 9, nostr.Tags{{"h", "team"}}, "removed"), "restricted:")
	e.refusedWith(c, mkEvent(mallory, 9021, nostr.Tags{{"h", "team"}}, ""), "restricted:")   // still closed
	e.mustPublish(c, mkEvent(alice, 9000, nostr.Tags{{"h", "team"}, {"p", mallory.pk}}, "")) // still moderator
	e.waitMembers("team", e.owner.pk, alice.pk, mallory.pk)
	if m := e.groupMeta(&mallory, 39000, "team"); m == nil || !hasFlag(m, "hidden") {
		t.Fatal("metadata after restart")
	}

	// delete-group: admins only; everything of the group goes
	e.refusedWith(c, mkEvent(alice, 9008, nostr.Tags{{"h", "team"}}, ""), "restricted:")
	e.mustPublish(c, mkEvent(e.owner, 9008, nostr.Tags{{"h", "team"}}, ""))
	e.refusedWith(c, mkEvent(alice, 9, nostr.Tags{{"h", "team"}}, "anyone?"), "restricted:")
	if got, _ := fetch(t, e.connect(&e.agent), nostr.Filter{Tags: nostr.TagMap{"h": {"team"}}}); len(got) != 0 {
		t.Fatalf("%d events of the deleted group remain", len(got))
	}
	if m := e.groupMeta(&e.agent, 39000, "team"); m != nil {
		t.Fatal("metadata of deleted group remains")
	}
	e.restart()
	e.refusedWith(e.connect(nil), mkEvent(alice, 9, nostr.Tags{{"h", "team"}}, "after restart"), "restricted:")
}

func TestGroups_LiveMessageToMembersOnly(t *testing.T) {
	e := startEnv(t)
	alice, bob := newUser(), newUser()
	c := e.connect(nil)
	e.mustPublish(c, mkEvent(e.owner, 9007, nostr.Tags{{"h", "g"}}, ""))
	e.mustPublish(c, mkEvent(alice, 9021, nostr.Tags{{"h", "g"}}, ""))
	member := e.raw()
	member.auth(e.url, alice)
	member.send("REQ", "s", nostr.Filter{Kinds: []int{9}, Tags: nostr.TagMap{"h": {"g"}}})
	outsider := e.raw()
	outsider.auth(e.url, bob)
	outsider.send("REQ", "s", nostr.Filter{Kinds: []int{9}})
	member.waitFor("EOSE", "s", 2*time.Second)
	outsider.waitFor("EOSE", "s", 2*time.Second)
	msg := e.mustPublish(c, mkEvent(alice, 9, nostr.Tags{{"h", "g"}}, "members only"))
	if _, ok := member.waitFor("EVENT", "s", 2*time.Second); !ok || !member.eventIDs("s")[msg.ID] {
		t.Fatal("member did not get the live message")
	}
	// a public note after it is the barrier on the outsider's connection
	waitEvent(t, outsider.Client, "s", e.mustPublish(c, mkEvent(bob, 9, nil, "public, after")).ID)
	if outsider.eventIDs("s")[msg.ID] {
		t.Fatal("non-member got the live message")
	}
}

// TestGroups_RestartKeepsOrderOfAppliedEvents: the relay applies events
// in arrival order; a restart must not reorder them by created_at (a
// future-dated put-user followed by a remove-user must stay removed).
func TestGroups_RestartKeepsOrderOfAppliedEvents(t *testing.T) {
	e := startEnv(t)
	x := newUser()
	c := e.connect(nil)
	e.mustPublish(c, mkEvent(e.owner, 9007, nostr.Tags{{"h", "g"}}, ""))
	put := mkEvent(e.owner, 9000, nostr.Tags{{"h", "g"}, {"p", x.pk, "admin"}}, "")
	put.CreatedAt = nostr.Now() + 300
	put.Sign(e.owner.sk)
	e.mustPublish(c, put)
	e.mustPublish(c, mkEvent(e.owner, 9001, nostr.Tags{{"h", "g"}, {"p", x.pk}}, ""))
	e.mustPublish(c, mkEvent(e.owner, 9009, nostr.Tags{{"h", "g"}, {"code", "k"}}, ""))
	e.waitMembers("g", e.owner.pk)
	e.restart()
	c = e.connect(nil)
	e.refusedWith(c, mkEvent(x, 9, nostr.Tags{{"h", "g"}}, "am I back?"), "restricted:")
	e.mustPublish(c, mkEvent(e.owner, 9002, nostr.Tags{{"h", "g"}, {"private"}, {"restricted"}, {"closed"}}, ""))
	e.mustPublish(c, mkEvent(newUser(), 9021, nostr.Tags{{"h", "g"}, {"code", "k"}}, "invite survives"))
}
