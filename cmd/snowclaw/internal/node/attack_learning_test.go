package node_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/privmsg"
	"github.com/snowclaw/snowclaw/internal/wsclient"
)

// The trust issue's lesson leak must not come back through learning: what
// alice tells the agent in private becomes her private memory, and no
// prompt of a group — not the reply prompt, not learning's own requests —
// may carry it, whoever asks.
func TestAttack_LearntPrivatePreferenceNeverInGroupPrompt(t *testing.T) {
	const secret = "oolong from Taiwan"
	s := &learnScript{rules: []learnRule{
		{trigger: "I secretly drink", text: "alice prefers " + secret, kind: "preference"},
		{trigger: "which drink", text: "alice prefers some drink", kind: "preference"},
	}}
	e := startLearnEnv(t, s)
	wrap, err := privmsg.Wrap(context.Background(), e.alice.sk, e.agent.pk, "between us: I secretly drink "+secret+" every morning", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.mustPublish(e.ac, wrap)
	e.settle()
	learnt := e.itemsWhere(secret)
	if len(learnt) != 1 || learnt[0].Tier != snowclaw.TierPrivate || learnt[0].Subject != e.alice.pk {
		t.Fatalf("the private preference was not learnt as alice's private memory: %+v", e.n.Agent().Items())
	}
	chats := 1 // the private message got a reply
	e.waitChats(chats)
	before := s.count()

	// in the group, bob and then alice ask about it
	for _, who := range []struct {
		u user
		c *wsclient.Client
	}{{e.bob, e.bc}, {e.alice, e.ac}} {
		e.say(who.c, who.u, "Snowclaw, which drink does alice prefer in the morning?")
		chats++
		e.waitChats(chats)
		e.settle()
		if p := e.lastChatPrompt(); strings.Contains(p, secret) {
			t.Fatalf("a group prompt carries alice's private memory:\n%s", p)
		}
	}
	if s.count() == before {
		t.Fatal("the group messages were not read by learning: the test proves nothing about its requests")
	}
	reqs := s.structuredSince(before)
	for _, r := range reqs {
		if strings.Contains(r, secret) {
			t.Fatalf("a group's learning request carries alice's private memory:\n%s", r)
		}
	}
	v, ok := e.n.Agent().LastContext(mustSubject(t, "group:"+agentGroup))
	if !ok || slices.Contains(v.MemoryIDs, learnt[0].ID) {
		t.Fatalf("group context view %+v lists the private memory %s", v, learnt[0].ID)
	}
	// bob's NIP-50 search does not find it either (it ranks other things)
	for _, r := range search(t, e.testEnv, &e.bob, nostr.Filter{Search: "oolong Taiwan"}) {
		if strings.HasSuffix(r.Tags.GetD(), learnt[0].ID) || strings.Contains(r.Content, secret) {
			t.Fatalf("bob finds alice's private memory: %v", r)
		}
	}
	if res := search(t, e.testEnv, &e.alice, nostr.Filter{Search: "oolong Taiwan"}); !slices.ContainsFunc(res, func(r *nostr.Event) bool { return strings.HasSuffix(r.Tags.GetD(), learnt[0].ID) }) {
		t.Fatalf("alice cannot find her own learnt memory (the control): %v", ids(res))
	}

	// the control: in private, alice's own prompt does recall it, and the
	// debug view names it, so the absence above is the rule at work
	wrap, _ = privmsg.Wrap(context.Background(), e.alice.sk, e.agent.pk, "which drink do I prefer in the morning?", nil)
	e.mustPublish(e.ac, wrap)
	chats++
	e.waitChats(chats)
	e.settle()
	if p := e.lastChatPrompt(); !strings.Contains(p, secret) {
		t.Fatalf("alice's private prompt does not recall her own memory:\n%s", p)
	}
	v, ok = e.n.Agent().LastContext(mustSubject(t, snowclaw.NpubOf(e.alice.pk)))
	if !ok || !slices.Contains(v.MemoryIDs, learnt[0].ID) {
		t.Fatalf("private context view %+v does not list %s", v, learnt[0].ID)
	}
	// and the owner reads the same view through the API the CLI uses
	code, body := e.api(&e.owner, "GET", "/api/v1/agent/context/"+snowclaw.NpubOf(e.alice.pk), nil)
	if code != 200 || !strings.Contains(toJSON(body["memory_ids"]), learnt[0].ID) {
		t.Fatalf("GET context: %d %v", code, body)
	}
	if code, _ := e.api(&e.bob, "GET", "/api/v1/agent/context/group:"+agentGroup, nil); code != 403 {
		t.Fatalf("bob reads the context view: %d", code)
	}
}
