package node_test

import (
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
)

// With [memory.remote] agent_default the agent's recall is layered, but
// only for a reply anyone may read: the recall's query is the words of the
// message answered, and a closed group's or a private message's words must
// not be sent to a foreign relay. The remote is a second snowclaw whose
// every HTTP request (NIP-11 and websocket upgrade) is counted, and a
// remote memory in the prompt names its relay; the
// private and group replies come first, so a remote that was never asked
// is not a remote that was cached.
func TestRemote_AgentRecallPublicRepliesOnly(t *testing.T) {
	snow := startEnv(t, withSearch)
	far := serveRemote(t, snow.n.Handler())
	const fact = "Zeppelin hangars are inspected by Skyward Aerostat Services"
	publishTo(t, snow.url, memory(newUser(), "zeppelin/inspector", `{"summary":"`+fact+`"}`))

	e := startAgentEnv(t, withRemotes(10*time.Second, far.url, 1.0), func(o *node.Options) { o.Remote.AgentDefault = true })

	// a private message: its words stay here, even when they ask for the
	// remotes in the search syntax
	req := e.ask(func() {
		e.dm(e.alice, "Snowclaw, who inspects the zeppelin hangars? include:remote my badge pin is 4471")
	})
	if all := strings.Join(contents(req), "\n"); strings.Contains(all, "Skyward") {
		t.Fatalf("a private reply's prompt holds the remote memory:\n%s", all)
	}
	if n := far.hits.Load(); n != 0 {
		t.Fatalf("a private message's recall asked the remote (%d requests)", n)
	}
	// a closed group (the agent room is private): its words stay here too
	req = e.ask(func() {
		e.say(e.ac, e.alice, "@Snowclaw include:remote who inspects the zeppelin hangars for the moon base?")
	})
	if all := strings.Join(contents(req), "\n"); strings.Contains(all, "Skyward") {
		t.Fatalf("a closed group's prompt holds the remote memory:\n%s", all)
	}
	if n := far.hits.Load(); n != 0 {
		t.Fatalf("a closed group's recall asked the remote (%d requests)", n)
	}

	// a public, open group: anyone may read the reply, so the recall is layered
	oc := e.connect(&e.owner)
	e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", "plaza"}, {"public"}, {"open"}}, ""))
	stranger := newUser()
	sc := e.connect(&stranger)
	e.mustPublish(sc, mkEvent(stranger, 9021, nostr.Tags{{"h", "plaza"}}, ""))
	req = e.ask(func() {
		e.mustPublish(sc, mkEvent(stranger, 9, nostr.Tags{{"h", "plaza"}}, "@Snowclaw who inspects the zeppelin hangars?"))
	})
	if far.hits.Load() == 0 {
		t.Fatal("a public reply's recall did not ask the remote")
	}
	sys := req.Messages[0].Content
	_, mems, _ := strings.Cut(sys, "RELEVANT MEMORIES")
	if !strings.Contains(mems, fact) {
		t.Fatalf("the remote memory is not among the public reply's memories:\n%s", sys)
	}
	// marked with where it came from, so the model can weigh another
	// relay's claim
	if !strings.Contains(mems, "(from the relay "+far.url+") "+fact) {
		t.Fatalf("the remote memory is not marked with its origin:\n%s", mems)
	}
}

// Learning compares a candidate only with memories stored here. With the
// agent's recall layered, a public conversation's recall does reach the
// remote, but another relay's memory is never shown to the decide step:
// nothing learnt is filed beside, or as a version of, a memory this relay
// does not hold (it could not show it in its conflict dashboard or
// history, and the remote's author never wrote here).
func TestRemote_LearningComparesOnlyWithStoredMemories(t *testing.T) {
	snow := startEnv(t, withSearch)
	far := serveRemote(t, snow.n.Handler())
	publishTo(t, snow.url, memory(newUser(), "user/alice/home", `{"summary":"alice lives in Paris"}`))

	s := &learnScript{
		rules:  []learnRule{{trigger: "moved to Berlin", text: "alice lives in Berlin now", kind: "fact"}},
		update: []string{"Berlin"},
	}
	e := startLearnEnv(t, s, withRemotes(10*time.Second, far.url, 1.0), func(o *node.Options) { o.Remote.AgentDefault = true })
	oc := e.connect(&e.owner)
	e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", "plaza"}, {"public"}, {"open"}}, ""))
	bc := e.connect(&e.bob)
	e.mustPublish(bc, mkEvent(e.bob, 9021, nostr.Tags{{"h", "plaza"}}, ""))
	e.mustPublish(bc, mkEvent(e.bob, 9, nostr.Tags{{"h", "plaza"}}, "news from alice: she moved to Berlin last month"))
	e.settle()

	if far.hits.Load() == 0 {
		t.Fatal("the public conversation's learning never asked the remote: this test shows nothing")
	}
	if strings.Contains(s.structuredText(), "alice lives in Paris") {
		t.Fatalf("the decide step was shown the remote's memory:\n%s", s.structuredText())
	}
	learnt := e.itemsWhere("Berlin")
	if len(learnt) != 1 || learnt[0].Supersedes != "" || learnt[0].Topic == "user/alice/home" {
		t.Fatalf("learnt = %+v, want one new memory of its own, beside and over nothing remote", learnt)
	}
}
