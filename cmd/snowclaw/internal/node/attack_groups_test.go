package node_test

import (
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/internal/wsclient"
)

// Finding 3: only the first h tag was read, so an event naming a group the
// author belongs to (or none, ["h",""]) and then a private group B got into
// B: B's members received it stored and live (#h matches any h tag), and
// B's moderators could not delete it.

// waitEventIn waits until subscription sub of c has received event id: a
// barrier proving that everything broadcast before it was delivered.
func waitEventIn(t *testing.T, c *wsclient.Client, sub, id string) {
	t.Helper()
	testwait.For(t, "event "+id[:8]+" on subscription "+sub, func() bool { return c.EventIDs(sub)[id] })
}

// twoGroups makes the private groups A (the stranger is a member) and B
// (alice is a member) and returns a connection alice listens on for B.
func twoGroups(t *testing.T, e *testEnv, stranger, alice user) *wsclient.Client {
	t.Helper()
	c := e.connect(nil)
	e.mustPublish(c, mkEvent(e.owner, 9007, nostr.Tags{{"h", "A"}}, ""))
	e.mustPublish(c, mkEvent(e.owner, 9007, nostr.Tags{{"h", "B"}}, ""))
	e.mustPublish(c, mkEvent(stranger, 9021, nostr.Tags{{"h", "A"}}, ""))
	e.mustPublish(c, mkEvent(alice, 9021, nostr.Tags{{"h", "B"}}, ""))
	e.waitMembers("A", e.owner.pk, stranger.pk)
	e.waitMembers("B", e.owner.pk, alice.pk)
	live := e.connect(&alice)
	if err := live.Send("REQ", "live", nostr.Filter{Tags: nostr.TagMap{"h": {"B"}}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := live.WaitFor("EOSE", "live", testwait.Scaled(3*time.Second)); !ok {
		t.Fatal("no EOSE for the live subscription")
	}
	return live
}

func TestAttack_GroupTags_SeveralOrEmptyHRefused(t *testing.T) {
	e := startEnv(t)
	stranger, alice := newUser(), newUser()
	live := twoGroups(t, e, stranger, alice)
	c := e.connect(nil)

	var attempts []nostr.Event
	for _, tags := range []nostr.Tags{
		{{"h", ""}, {"h", "B"}},
		{{"h", "A"}, {"h", "B"}},
		{{"h"}, {"h", "B"}},
		{{"h", "B"}, {"h", "B"}},
		{{"h", ""}},
		{{"h"}},
	} {
		attempts = append(attempts, mkEvent(stranger, 9, tags, "planted"))
	}
	// every kind and every author goes through the same parser: the
	// agent's and the relay's own events, moderation and join requests,
	// memories and deletions
	attempts = append(attempts,
		mkEvent(e.agent, 9, nostr.Tags{{"h", "A"}, {"h", "B"}}, "agent in two groups"),
		mkEvent(e.relay, 9, nostr.Tags{{"h", ""}, {"h", "B"}}, "relay with an empty h"),
		mkEvent(e.owner, 9000, nostr.Tags{{"h", "A"}, {"h", "B"}, {"p", stranger.pk}}, ""),
		mkEvent(stranger, 9021, nostr.Tags{{"h", "A"}, {"h", "B"}}, ""),
		mkEvent(stranger, 9021, nostr.Tags{{"h", "B"}, {"h", ""}}, ""),
		mkEvent(stranger, 9022, nostr.Tags{{"h", "A"}, {"h", "B"}}, ""),
		mkEvent(stranger, 30078, nostr.Tags{{"d", "snow:memory:x"}, {"h", "A"}, {"h", "B"}}, "a group memory"),
		mkEvent(stranger, 5, nostr.Tags{{"h", "A"}, {"h", "B"}, {"e", "00"}}, ""),
	)
	for _, evt := range attempts {
		e.refusedWith(c, evt, "invalid:")
	}

	// barrier: a real message of B reaches alice, so anything the relay
	// had broadcast before it would have, too
	real := e.mustPublish(c, mkEvent(alice, 9, nostr.Tags{{"h", "B"}}, "real"))
	waitEventIn(t, live, "live", real.ID)
	got := live.EventIDs("live")
	stored, closed := fetch(t, e.connect(&alice), nostr.Filter{Tags: nostr.TagMap{"h": {"B"}}})
	if closed != "" {
		t.Fatalf("alice's REQ for B closed: %s", closed)
	}
	for _, evt := range attempts {
		if got[evt.ID] || contains(stored, evt.ID) {
			t.Fatalf("B's member received the refused event %v (live %v, stored %v)", evt.Tags, got[evt.ID], contains(stored, evt.ID))
		}
	}
	if !contains(stored, real.ID) {
		t.Fatal("B's member does not get B's real message")
	}
	// the stranger is still not in B after the refused put-user and join
	e.waitMembers("B", e.owner.pk, alice.pk)
}

// TestAttack_GroupTags_StoredBeforeFixStaysOut: events planted before the
// fix are still in the store. They must not count as B's (nor as public)
// for anyone reading, and B's moderators can delete them.
func TestAttack_GroupTags_StoredBeforeFixStaysOut(t *testing.T) {
	e := startEnv(t)
	stranger, alice, passer := newUser(), newUser(), newUser()
	twoGroups(t, e, stranger, alice)

	planted := []nostr.Event{
		mkEvent(stranger, 9, nostr.Tags{{"h", ""}, {"h", "B"}}, "planted empty"),
		mkEvent(stranger, 9, nostr.Tags{{"h", "A"}, {"h", "B"}}, "planted A+B"),
		mkEvent(stranger, 9, nostr.Tags{{"h"}, {"h", "B"}}, "planted valueless"),
	}
	e.plant(planted)
	e.start()

	// the store really holds them: the relay's own key reads everything
	if all, _ := fetch(t, e.connect(&e.relay), nostr.Filter{Tags: nostr.TagMap{"h": {"B"}}}); !contains(all, planted[0].ID) || !contains(all, planted[1].ID) {
		t.Fatalf("planted events not in the store: %v", ids(all))
	}
	member := e.connect(&alice)
	for _, f := range []nostr.Filter{
		{Tags: nostr.TagMap{"h": {"B"}}},
		{Kinds: []int{9}},
		{IDs: ids(ptrs(planted))},
		{Authors: []string{stranger.pk}},
	} {
		for who, c := range map[string]*wsclient.Client{"B's member": member, "anonymous": e.connect(nil), "a stranger": e.connect(&passer)} {
			got, _ := fetch(t, c, f)
			for _, p := range planted {
				if contains(got, p.ID) {
					t.Fatalf("%s got planted event %v with filter %v", who, p.Tags, f)
				}
			}
			if n, closed := count(t, c, f); who != "B's member" && n != 0 {
				t.Fatalf("%s: COUNT %v = %d (CLOSED %q)", who, f, n, closed)
			}
		}
	}
	if n, _ := count(t, member, nostr.Filter{IDs: ids(ptrs(planted))}); n != 0 {
		t.Fatalf("B's member counts %d planted events", n)
	}

	// B's moderator (the owner, admin of B) deletes them from B
	c := e.connect(nil)
	e.mustPublish(c, mkEvent(e.owner, 9005, nostr.Tags{{"h", "B"}, {"e", planted[0].ID}, {"e", planted[1].ID}, {"e", planted[2].ID}}, ""))
	if left, _ := fetch(t, e.connect(&e.relay), nostr.Filter{IDs: ids(ptrs(planted))}); len(left) != 0 {
		t.Fatalf("%d planted events survive B's moderator's deletion", len(left))
	}
}

func ptrs(evs []nostr.Event) []*nostr.Event {
	out := make([]*nostr.Event, len(evs))
	for i := range evs {
		out[i] = &evs[i]
	}
	return out
}
