package node_test

import (
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/internal/wsclient"
)

// Finding 8: invite codes (kind 9009) of closed groups were readable by
// anyone, and a removed member rejoined with the old code.

// closedClub makes "club", closed but readable by everyone (its chat is
// public), with mod as moderator and member as a plain member.
func closedClub(t *testing.T, e *testEnv, mod, member user) *wsclient.Client {
	t.Helper()
	c := e.connect(nil)
	e.mustPublish(c, mkEvent(e.owner, 9007, nostr.Tags{{"h", "club"}, {"public"}, {"closed"}}, ""))
	e.mustPublish(c, mkEvent(e.owner, 9000, nostr.Tags{{"h", "club"}, {"p", mod.pk, "moderator"}}, ""))
	e.mustPublish(c, mkEvent(mod, 9000, nostr.Tags{{"h", "club"}, {"p", member.pk}}, ""))
	e.waitMembers("club", e.owner.pk, mod.pk, member.pk)
	return c
}

func TestAttack_InviteCodes_ReadableByModeratorsOnly(t *testing.T) {
	e := startEnv(t)
	mod, member, stranger, joiner := newUser(), newUser(), newUser(), newUser()
	c := closedClub(t, e, mod, member)

	// live subscriptions opened before the code exists
	listeners := map[string]*wsclient.Client{"stranger": e.connect(&stranger), "member": e.connect(&member), "anonymous": e.connect(nil)}
	for who, l := range listeners {
		if err := l.Send("REQ", "live", nostr.Filter{Tags: nostr.TagMap{"h": {"club"}}}); err != nil {
			t.Fatal(err)
		}
		if _, ok := l.WaitFor("EOSE", "live", testwait.Scaled(3*time.Second)); !ok {
			t.Fatalf("%s: no EOSE", who)
		}
	}
	invite := e.mustPublish(c, mkEvent(mod, 9009, nostr.Tags{{"h", "club"}, {"code", "sesame"}}, ""))
	// the joiner's request carries the code too
	join := e.mustPublish(c, mkEvent(joiner, 9021, nostr.Tags{{"h", "club"}, {"code", "sesame"}}, ""))
	barrier := e.mustPublish(c, mkEvent(member, 9, nostr.Tags{{"h", "club"}}, "barrier"))
	secret := []string{invite.ID, join.ID}

	for who, l := range listeners {
		waitEventIn(t, l, "live", barrier.ID)
		for _, id := range secret {
			if l.EventIDs("live")[id] {
				t.Fatalf("%s received event %s carrying the code live", who, id[:8])
			}
		}
	}
	filters := []nostr.Filter{
		{Kinds: []int{9009}},
		{Kinds: []int{9021}},
		{Tags: nostr.TagMap{"h": {"club"}}},
		{IDs: secret},
		{Authors: []string{mod.pk, joiner.pk}},
	}
	for who, u := range map[string]*user{"stranger": &stranger, "member": &member, "anonymous": nil} {
		rc := e.connect(u)
		for _, f := range filters {
			got, _ := fetch(t, rc, f)
			for _, id := range secret {
				if contains(got, id) {
					t.Fatalf("%s read event %s carrying the code with %v", who, id[:8], f)
				}
			}
			if n, _ := count(t, rc, nostr.Filter{IDs: secret}); n != 0 {
				t.Fatalf("%s counts %d events carrying the code", who, n)
			}
		}
	}
	// those who may make codes read them, as does the person who joined
	for who, u := range map[string]user{"moderator": mod, "owner": e.owner, "agent": e.agent} {
		got, _ := fetch(t, e.connect(&u), nostr.Filter{IDs: secret})
		if !contains(got, invite.ID) || !contains(got, join.ID) {
			t.Fatalf("%s cannot read the invite and the join: %v", who, ids(got))
		}
	}
	if got, _ := fetch(t, e.connect(&joiner), nostr.Filter{IDs: secret}); !contains(got, join.ID) || contains(got, invite.ID) {
		t.Fatalf("joiner reads %v; want their own join only", ids(got))
	}
}

func TestAttack_InviteCodes_RemovalRevokes(t *testing.T) {
	e := startEnv(t)
	mod, member, mallory, puppet, carol, dave, erin, frank, gina := newUser(), newUser(), newUser(), newUser(), newUser(), newUser(), newUser(), newUser(), newUser()
	c := closedClub(t, e, mod, member)
	for _, code := range []string{"sesame", "other", "shared", "future", "past"} {
		e.mustPublish(c, mkEvent(mod, 9009, nostr.Tags{{"h", "club"}, {"code", code}}, ""))
	}
	join := func(u user, code string) nostr.Event {
		return mkEvent(u, 9021, nostr.Tags{{"h", "club"}, {"code", code}}, "")
	}

	e.mustPublish(c, join(mallory, "sesame"))
	e.mustPublish(c, mkEvent(mod, 9001, nostr.Tags{{"h", "club"}, {"p", mallory.pk}}, ""))
	// a joiner dating the request ahead of the removal: a restart replays
	// by created_at, which must not bring the code back
	early := join(erin, "future")
	early.CreatedAt = nostr.Now() + 9*60
	early.Sign(erin.sk)
	e.mustPublish(c, early)
	e.mustPublish(c, mkEvent(mod, 9001, nostr.Tags{{"h", "club"}, {"p", erin.pk}}, ""))
	// or dating it before the group was created, which a replay by
	// created_at skips
	backdated := join(gina, "past")
	backdated.CreatedAt = nostr.Now() - 30*60
	backdated.Sign(gina.sk)
	e.mustPublish(c, backdated)
	e.mustPublish(c, mkEvent(mod, 9001, nostr.Tags{{"h", "club"}, {"p", gina.pk}}, ""))
	// leaving of one's own accord revokes nothing
	e.mustPublish(c, join(dave, "shared"))
	e.mustPublish(c, mkEvent(dave, 9022, nostr.Tags{{"h", "club"}}, ""))
	e.waitMembers("club", e.owner.pk, mod.pk, member.pk)

	check := func(when string) {
		t.Helper()
		for who, evt := range map[string]nostr.Event{
			"mallory with her old code":          join(mallory, "sesame"),
			"mallory's puppet with her code":     join(puppet, "sesame"),
			"mallory with a code she never used": join(mallory, "other"),
			"erin with her future-dated code":    join(erin, "future"),
			"frank with erin's code":             join(frank, "future"),
			"frank with gina's code":             join(frank, "past"),
		} {
			err := publish(c, evt)
			if err == nil || !strings.HasPrefix(err.Error(), "msg: restricted: ") {
				t.Fatalf("%s: %s: %v, want a restricted: refusal", when, who, err)
			}
		}
	}
	check("live")
	e.restart()
	c = e.connect(nil)
	check("after a restart")

	// codes no removed member used still work, for anyone
	e.mustPublish(c, join(carol, "other"))
	e.mustPublish(c, join(frank, "shared"))
	e.waitMembers("club", e.owner.pk, mod.pk, member.pk, carol.pk, frank.pk)
	// a moderator can still bring mallory back
	e.mustPublish(c, mkEvent(mod, 9000, nostr.Tags{{"h", "club"}, {"p", mallory.pk}}, ""))
	e.waitMembers("club", e.owner.pk, mod.pk, member.pk, carol.pk, frank.pk, mallory.pk)
}
