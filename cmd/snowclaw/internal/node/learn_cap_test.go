package node_test

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	agentmem "github.com/snowclaw/snowclaw/agent/memory"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
)

// The per-scope cap keeps what it takes out as history: the overflow
// leaves the agent's memory, search and the prompt, stays on the relay
// (include:superseded finds it) and the owner can restore it.
func TestLearn_ScopeCapArchivesOverflowReversibly(t *testing.T) {
	s := &learnScript{rules: []learnRule{
		{trigger: "beekeeping", text: "alice keeps bees on the roof", kind: "fact"},
		{trigger: "catamaran", text: "alice sails a catamaran", kind: "fact"},
		{trigger: "vinyl", text: "alice collects vinyl records", kind: "fact"},
	}}
	e := startLearnEnv(t, s, func(o *node.Options) { o.Agent.Learning.ScopeItems = 2 })
	for _, m := range []string{"beekeeping is my weekend", "I sail my catamaran", "my vinyl shelf is full"} {
		e.say(e.ac, e.alice, m)
		e.settle()
	}
	before := groupItems(e)
	if len(before) != 3 {
		t.Fatalf("want three learnt memories before the cap, got %+v", before)
	}
	events := map[string]string{} // item id → its event id
	ac := e.connect(&e.agent)
	for _, it := range before {
		evs, _ := fetch(t, ac, nostr.Filter{Kinds: []int{30078}, Authors: []string{e.agent.pk}, Tags: nostr.TagMap{"d": {snowclaw.PrefixMemoryItem + it.Topic}}})
		if len(evs) != 1 {
			t.Fatalf("item %s has %d events", it.ID, len(evs))
		}
		events[it.ID] = evs[0].ID
	}

	code, body := e.api(&e.owner, "POST", "/api/v1/agent/compact", map[string]int{})
	if code != 200 || body["archived"] != 1.0 || body["removed"] != 0.0 {
		t.Fatalf("compact: %d %v", code, body)
	}
	after := groupItems(e)
	if len(after) != 2 {
		t.Fatalf("after the cap: %+v", after)
	}
	var gone agentmem.Item
	for _, it := range before {
		if !containsItem(after, it.ID) {
			gone = it
		}
	}
	evtID := events[gone.ID]
	// history: still on the relay, readable by the group's members
	if evs, _ := fetch(t, e.bc, nostr.Filter{IDs: []string{evtID}}); len(evs) != 1 {
		t.Fatalf("the archived memory %q was deleted from the relay", gone.Text)
	}
	words := strings.Join(strings.Fields(gone.Text)[1:], " ")
	if found(search(t, e.testEnv, &e.bob, nostr.Filter{Search: words}), evtID) {
		t.Fatal("search still ranks the archived memory")
	}
	if !found(search(t, e.testEnv, &e.bob, nostr.Filter{Search: words + " include:superseded"}), evtID) {
		t.Fatal("include:superseded does not find the archived memory")
	}
	// out of the prompt
	e.say(e.ac, e.alice, "Snowclaw, "+words+"?")
	e.waitChats(1)
	if p := e.lastChatPrompt(); strings.Contains(p, gone.Text) {
		t.Fatalf("the archived memory is in the prompt:\n%s", p)
	}
	// reversible: only the owner restores it, and it is current again
	if code, _ := e.api(&e.bob, "POST", "/api/v1/agent/restore/"+evtID, nil); code != 403 {
		t.Fatalf("bob restores: %d", code)
	}
	if code, _ := e.api(&e.owner, "POST", "/api/v1/agent/restore/"+strings.Repeat("ab", 32), nil); code != 404 {
		t.Fatalf("restoring an unknown event: %d, want 404", code)
	}
	if code, body := e.api(&e.owner, "POST", "/api/v1/agent/restore/"+evtID, nil); code != 200 || body["text"] != gone.Text {
		t.Fatalf("restore: %d %v", code, body)
	}
	if !containsItem(groupItems(e), gone.ID) {
		t.Fatal("the restored memory is not back in the agent's memory")
	}
	if len(search(t, e.testEnv, &e.bob, nostr.Filter{Search: words})) == 0 {
		t.Fatal("search does not find the restored memory")
	}
}

func groupItems(e *agentEnv) []agentmem.Item {
	var out []agentmem.Item
	for _, it := range e.n.Agent().Items() {
		if it.Tier == snowclaw.TierGroup && it.Source == agentmem.SourceAgent {
			out = append(out, it)
		}
	}
	return out
}

func containsItem(list []agentmem.Item, id string) bool {
	for _, it := range list {
		if it.ID == id {
			return true
		}
	}
	return false
}

func found(evs []*nostr.Event, id string) bool {
	for _, e := range evs {
		if e.ID == id {
			return true
		}
	}
	return false
}

// An author who names the d tag of an archived memory of the agent cannot
// have a learnt contradiction written there: the agent's event at that
// address is history, and writing over it would erase it.
func TestAttack_ContradictionCannotOverwriteArchivedHistory(t *testing.T) {
	s := &learnScript{
		rules: []learnRule{
			{trigger: "beekeeping", text: "alice keeps bees on the roof", kind: "fact"},
			{trigger: "catamaran", text: "alice sails a catamaran", kind: "fact"},
			{trigger: "vinyl", text: "alice collects vinyl records", kind: "fact"},
			{trigger: "gave up", text: "alice gave up her hobbies: bees, catamaran and vinyl", kind: "fact"},
		},
		updateTo: map[string]string{"gave up": "mallory says"},
	}
	e := startLearnEnv(t, s, func(o *node.Options) { o.Agent.Learning.ScopeItems = 2 })
	for _, m := range []string{"beekeeping is my weekend", "I sail my catamaran", "my vinyl shelf is full"} {
		e.say(e.ac, e.alice, m)
		e.settle()
	}
	before := groupItems(e)
	if code, body := e.api(&e.owner, "POST", "/api/v1/agent/compact", map[string]int{}); code != 200 || body["archived"] != 1.0 {
		t.Fatalf("compact: %d %v", code, body)
	}
	var gone agentmem.Item
	for _, it := range before {
		if !containsItem(groupItems(e), it.ID) {
			gone = it
		}
	}
	ac := e.connect(&e.agent)
	d := snowclaw.PrefixMemoryItem + gone.Topic
	archived, _ := fetch(t, ac, nostr.Filter{Kinds: []int{30078}, Authors: []string{e.agent.pk}, Tags: nostr.TagMap{"d": {d}}})
	if len(archived) != 1 {
		t.Fatalf("the archived memory's event: %d", len(archived))
	}

	mallory := newUser()
	mc := e.connect(&mallory)
	e.mustPublish(mc, memory(mallory, gone.Topic, `{"summary":"mallory says alice gave up her hobbies: bees, catamaran and vinyl"}`))
	e.settle()
	e.say(e.bc, e.bob, "did you hear alice gave up all her hobbies?")
	e.settle()
	if !strings.Contains(s.structuredText(), "mallory says") {
		t.Fatal("the decide step never showed the model mallory's memory: the test proves nothing")
	}
	got := e.itemsWhere("gave up")
	if len(got) != 1 || got[0].Topic == gone.Topic {
		t.Fatalf("the contradiction = %+v, want it under a topic of its own", got)
	}
	if err := e.n.Agent().Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if still, _ := fetch(t, ac, nostr.Filter{IDs: []string{archived[0].ID}}); len(still) != 1 {
		t.Fatal("the archived memory's event was written over")
	}
}
