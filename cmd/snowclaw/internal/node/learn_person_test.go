package node_test

import (
	"context"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/privmsg"
)

// What learning teaches about a person goes into their record, in the
// part of it for the scope it was learnt in: a preference told in private
// is in the private prompt's person record and never in a group's, a
// preference told in the group is in that group's prompt and not in the
// private one; nobody but the person reads the record over REQ or search.
func TestAttack_LearntPersonRecordStaysInItsScope(t *testing.T) {
	const (
		secret  = "oolong from Taiwan"
		job     = "works nights at the observatory"
		grouped = "indents code with tabs"
	)
	s := &learnScript{rules: []learnRule{
		{trigger: "I secretly drink", text: "alice prefers " + secret, kind: "preference", topics: []string{"drink"}},
		{trigger: "I work nights", text: "alice " + job, kind: "fact"},
		{trigger: "I indent with tabs", text: "alice " + grouped, kind: "preference", topics: []string{"indentation"}},
	}}
	e := startLearnEnv(t, s)
	ctx := context.Background()
	dm := func(text string) {
		t.Helper()
		wrap, err := privmsg.Wrap(ctx, e.alice.sk, e.agent.pk, text, nil)
		if err != nil {
			t.Fatal(err)
		}
		e.mustPublish(e.ac, wrap)
	}
	chats := 0
	dm("between us: I secretly drink " + secret + " every morning. I work nights at the observatory.")
	chats++
	e.waitChats(chats)
	e.settle()
	e.say(e.ac, e.alice, "by the way I indent with tabs, always")
	e.settle()

	snap, _ := e.n.Agent().Get(mustSubject(t, snowclaw.NpubOf(e.alice.pk)))
	n := snap.Npub
	if n == nil || n.Private == nil || !strings.Contains(n.Private.Preferences["drink"], secret) || !containsSub(n.Private.Notes, job) {
		t.Fatalf("the private facet of alice's record lacks what she said in private: %s", toJSON(n))
	}
	if g := n.Groups[agentGroup]; !strings.Contains(g.Preferences["indentation"], grouped) {
		t.Fatalf("the group facet of alice's record lacks what she said in the group: %s", toJSON(n))
	}
	if rec := toJSON(map[string]any{"notes": n.Notes, "prefs": n.Preferences}); strings.Contains(rec, secret) || strings.Contains(rec, grouped) {
		t.Fatalf("a learnt preference went into the part shown everywhere: %s", rec)
	}

	// in private, the record shows the private facet, not the group's
	dm("what do I drink in the morning?")
	chats++
	e.waitChats(chats)
	p := e.lastChatPrompt()
	if !strings.Contains(p, "drink: alice prefers "+secret) || !strings.Contains(p, job) {
		t.Fatalf("alice's private prompt lacks her record's private facet:\n%s", p)
	}
	if strings.Contains(p, grouped) {
		t.Fatalf("alice's private prompt carries what was learnt in the group:\n%s", p)
	}

	// in the group, for alice and for bob: the group facet, never the private one
	for _, who := range []struct {
		u    user
		self bool
	}{{e.alice, true}, {e.bob, false}} {
		c := e.ac
		if !who.self {
			c = e.bc
		}
		e.say(c, who.u, "Snowclaw, what does alice drink, and how does she indent?")
		chats++
		e.waitChats(chats)
		p := e.lastChatPrompt()
		if strings.Contains(p, secret) || strings.Contains(p, job) {
			t.Fatalf("a group prompt carries what alice said in private:\n%s", p)
		}
		if who.self && !strings.Contains(p, "indentation: alice "+grouped) {
			t.Fatalf("alice's group prompt lacks her record's group facet (the control):\n%s", p)
		}
	}

	// over the relay: bob cannot read alice's record, by REQ or by search
	if err := e.n.Agent().Flush(ctx); err != nil {
		t.Fatal(err)
	}
	d := snowclaw.PrefixMemoryNpub + snowclaw.NpubOf(e.alice.pk)
	byD := nostr.Filter{Kinds: []int{30078}, Tags: nostr.TagMap{"d": {d}}}
	if evs, _ := fetch(t, e.bc, byD); len(evs) != 0 {
		t.Fatalf("bob reads alice's record over REQ: %v", ids(evs))
	}
	mine, _ := fetch(t, e.ac, byD)
	if len(mine) != 1 {
		t.Fatalf("alice cannot read her own record (the control): %d events", len(mine))
	}
	plain, err := snowclaw.Open(snowclaw.ReadEvent(mine[0]), e.alice.sk, e.agent.pk, e.alice.pk)
	if err != nil || !strings.Contains(plain, secret) {
		t.Fatalf("alice's record on the relay lacks the learnt preference: %v %s", err, plain)
	}
	for _, q := range []string{"oolong Taiwan", "observatory nights"} {
		for _, r := range search(t, e.testEnv, &e.bob, nostr.Filter{Search: q}) {
			if r.Tags.GetD() == d || strings.Contains(r.Content, secret) {
				t.Fatalf("bob finds alice's record searching %q: %v", q, r)
			}
		}
	}
}

func containsSub(list []string, sub string) bool {
	for _, v := range list {
		if strings.Contains(v, sub) {
			return true
		}
	}
	return false
}
