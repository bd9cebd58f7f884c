package node_test

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// A learnt contradiction of another author's memory stands beside it
// under the same topic, so the conflict dashboard lists both (over the
// real API) and neither hides the other; one the agent cannot answer on
// that topic (its own event holds the d tag: writing there would replace
// it) is added under a topic of its own instead.
func TestLearn_ContradictionOfAnotherSourceInConflictDashboard(t *testing.T) {
	s := &learnScript{
		rules: []learnRule{
			{trigger: "moved to Berlin", text: "alice lives in Berlin now", kind: "fact"},
			{trigger: "moved again", text: "alice lives in Lisbon", kind: "fact"},
		},
		update:   []string{"Berlin"},
		updateTo: map[string]string{"Lisbon": "Rome"},
	}
	e := startLearnEnv(t, s)
	const topic = "user/alice/home"
	hers := e.mustPublish(e.ac, memory(e.alice, topic, `{"summary":"alice lives in Paris"}`))
	e.settle()

	e.say(e.bc, e.bob, "news from alice: she moved to Berlin last month")
	e.settle()
	if !strings.Contains(s.structuredText(), "alice lives in Paris") {
		t.Fatal("the decide step never showed the model alice's memory")
	}
	learnt := e.itemsWhere("Berlin")
	if len(learnt) != 1 || learnt[0].Topic != topic || learnt[0].Supersedes != "" || learnt[0].Tier != snowclaw.TierGroup {
		t.Fatalf("learnt contradiction = %+v, want a group memory at %s superseding nothing", learnt, topic)
	}
	if err := e.n.Agent().Flush(t.Context()); err != nil {
		t.Fatal(err)
	}

	cs := e.conflicts(&e.bob, topic)
	if len(cs) != 1 || len(cs[0].Memories) != 2 {
		t.Fatalf("bob's conflict dashboard on %s: %+v", topic, cs)
	}
	var sawHers, sawAgent bool
	for _, m := range cs[0].Memories {
		sawHers = sawHers || m.ID == hers.ID
		sawAgent = sawAgent || m.Pubkey == e.agent.pk && strings.Contains(m.Text, "Berlin")
	}
	if !sawHers || !sawAgent {
		t.Fatalf("conflict memories %+v, want alice's and the agent's", cs[0].Memories)
	}
	// alice's memory is not hidden as if superseded
	if !found(search(t, e.testEnv, &e.bob, nostr.Filter{Search: "alice lives Paris"}), hers.ID) {
		t.Fatal("alice's memory left search")
	}
	// someone outside the group reads only alice's public memory: no conflict
	stranger := newUser()
	if cs := e.conflicts(&stranger, topic); len(cs) != 0 {
		t.Fatalf("a stranger sees the group's side of the conflict: %+v", cs)
	}

	// an author naming a d tag the agent already holds cannot make the
	// agent write over its own event: the contradiction gets its own topic
	own := e.itemsWhere("Berlin")[0]
	mallory := newUser()
	mc := e.connect(&mallory)
	e.mustPublish(mc, mkEvent(mallory, 9021, nostr.Tags{{"h", agentGroup}}, ""))
	e.mustPublish(mc, memory(mallory, topic, `{"summary":"alice lives in Rome"}`))
	e.settle()
	e.say(e.bc, e.bob, "alice moved again, to Lisbon")
	e.settle()
	if !strings.Contains(s.structuredText(), "alice lives in Rome") {
		t.Fatal("the decide step never showed the model mallory's memory")
	}
	got := e.itemsWhere("Lisbon")
	if len(got) != 1 || got[0].Topic == topic {
		t.Fatalf("second contradiction = %+v, want it under a topic of its own", got)
	}
	if it, ok := itemByID(e, own.ID); !ok || it.Topic != topic {
		t.Fatalf("the agent's memory at %s was replaced: %+v", topic, it)
	}
}

func itemByID(e *agentEnv, id string) (it struct{ Topic string }, ok bool) {
	for _, x := range e.n.Agent().Items() {
		if x.ID == id {
			return struct{ Topic string }{x.Topic}, true
		}
	}
	return it, false
}
