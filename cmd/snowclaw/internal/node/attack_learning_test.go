package node_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/privmsg"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
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

// What the relay deletes before learning reads it is never read: a
// message its author deletes, a group a moderator deletes. A deletion
// that did not reach the waiting batch would have the agent learn from
// words that no longer exist, and write them back as a memory.
func TestAttack_DeletedBeforeLearningIsNeverRead(t *testing.T) {
	s := &learnScript{rules: []learnRule{{trigger: "jazz", text: "alice loves jazz", kind: "preference"}}}
	e := startLearnEnv(t, s, func(o *node.Options) { o.Agent.Learning.Debounce = time.Hour })
	pending := func() int { return e.n.Agent().Stats().Learning.Pending }

	msg := e.say(e.ac, e.alice, "I love jazz")
	e.settle0()
	if pending() != 1 {
		t.Fatalf("pending = %d, want the message waiting", pending())
	}
	e.mustPublish(e.ac, mkEvent(e.alice, 5, nostr.Tags{{"e", msg.ID}}, ""))
	e.settle0()
	if pending() != 0 {
		t.Fatalf("pending = %d after the message was deleted", pending())
	}

	e.say(e.bc, e.bob, "jazz again, from bob")
	e.settle0()
	if pending() != 1 {
		t.Fatalf("pending = %d, want bob's message waiting", pending())
	}
	e.mustPublish(e.connect(&e.owner), mkEvent(e.owner, 9008, nostr.Tags{{"h", agentGroup}}, ""))
	e.settle()
	if pending() != 0 || s.count() != 0 || len(e.itemsWhere("jazz")) != 0 {
		t.Fatalf("after the group's deletion: pending %d, %d model calls, items %+v", pending(), s.count(), e.n.Agent().Items())
	}
}
