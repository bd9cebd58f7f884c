package node_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/ollama/ollama/api"
	"github.com/snowclaw/snowclaw/agent/dynconfig"
	"github.com/snowclaw/snowclaw/agent/llm"
	"github.com/snowclaw/snowclaw/agent/llm/llmtest"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/testwait"
)

// TestAgent_RecallStaysInTheGroup: a memory remembered in one group is
// recalled into that group's prompts (through the search index) and never
// into another group's, whose members may not read it.
func TestAgent_RecallStaysInTheGroup(t *testing.T) {
	e := startAgentEnv(t)
	e.say(e.ac, e.alice, "@Snowclaw remember that the hydrazine supplier is Orbital Fuels Ltd")
	if _, ok := e.llm.WaitRequests(1, testwait.Scaled(5*time.Second)); !ok {
		t.Fatal("no model call for the remember request")
	}
	// a second group, where only bob is
	oc := e.connect(&e.owner)
	e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", "otherroom"}}, ""))
	e.mustPublish(e.bc, mkEvent(e.bob, 9021, nostr.Tags{{"h", "otherroom"}}, ""))
	e.mustPublish(e.bc, mkEvent(e.bob, 9, nostr.Tags{{"h", "otherroom"}}, "@Snowclaw who is our hydrazine supplier?"))
	if _, ok := e.llm.WaitRequests(2, testwait.Scaled(5*time.Second)); !ok {
		t.Fatal("no model call in the other group")
	}
	if p := e.llm.LastPrompt(); strings.Contains(p, "Orbital Fuels") {
		t.Fatalf("a memory of %s leaked into another group's prompt:\n%s", agentGroup, p)
	}
	e.say(e.bc, e.bob, "@Snowclaw who is our hydrazine supplier?")
	if _, ok := e.llm.WaitRequests(3, testwait.Scaled(5*time.Second)); !ok {
		t.Fatal("no model call")
	}
	p := e.llm.LastPrompt()
	if !strings.Contains(p, "RELEVANT MEMORIES") || !strings.Contains(p, "Orbital Fuels Ltd") {
		t.Fatalf("the group's memory was not recalled:\n%s", p)
	}
	// forget removes it from RAM and from the relay
	e.say(e.ac, e.alice, "@Snowclaw forget that the hydrazine supplier is Orbital Fuels Ltd")
	e.settle()
	if items := e.n.Agent().Items(); len(items) != 0 {
		t.Fatalf("items after forget: %+v", items)
	}
	testwait.For(t, "the forgotten memory gone from the relay", func() bool {
		evs, _ := fetch(t, e.ac, nostr.Filter{Kinds: []int{30078}, Authors: []string{e.agent.pk}, Tags: nostr.TagMap{"h": {agentGroup}}})
		for _, ev := range evs {
			if strings.Contains(ev.Content, "Orbital") {
				return false
			}
		}
		return true
	})
}

// TestAgent_MemoryPersistsAcrossRestart: records flushed on shutdown are
// loaded back on start, and the prompt shows them again.
func TestAgent_MemoryPersistsAcrossRestart(t *testing.T) {
	e := startAgentEnv(t)
	e.n.Agent().AddOwnerNote(e.alice.pk, "is the mission commander")
	e.say(e.ac, e.alice, "decision: we launch from pad 39A")
	e.say(e.ac, e.alice, "the crew likes #orbits", nostr.Tag{"t", "orbits"})
	e.settle()
	e.restart() // Close flushes
	e.ac, e.bc = e.connect(&e.alice), e.connect(&e.bob)
	snap, ok := e.n.Agent().Get(mustSubject(t, "group:"+agentGroup))
	if !ok || snap.Group == nil || snap.Group.Purpose != "Planning the moon base launch" {
		t.Fatalf("group record after restart: %+v", snap.Group)
	}
	if len(snap.Group.Decisions) != 1 || !strings.Contains(snap.Group.Decisions[0].Text, "pad 39A") {
		t.Fatalf("decisions after restart: %+v", snap.Group.Decisions)
	}
	if !strings.Contains(strings.Join(snap.Group.Themes, ","), "orbits") {
		t.Fatalf("themes after restart: %+v", snap.Group.Themes)
	}
	e.say(e.ac, e.alice, "@Snowclaw where do we launch from?")
	if _, ok := e.llm.WaitRequests(1, testwait.Scaled(5*time.Second)); !ok {
		t.Fatal("no model call after restart")
	}
	p := e.llm.LastPrompt()
	for _, want := range []string{"is the mission commander", "pad 39A", "orbits", "alice"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt after restart lacks %q", want)
		}
	}
}

// TestAgent_LessonsFromFailuresAndCorrections: a failed model call and a
// correction of the agent become lessons, shown in later prompts; the
// relay keeps running.
func TestAgent_LessonsFromFailuresAndCorrections(t *testing.T) {
	calls := 0
	srv := llmtest.NewServer(t, func(api.ChatRequest) (string, error) {
		calls++
		if calls == 1 {
			return "", errors.New("model exploded")
		}
		return "Mars is the fourth planet", nil
	})
	model, err := llm.NewOllama(llm.OllamaOptions{Host: srv.URL, Model: "m", Timeout: 5 * time.Second, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	e := startAgentEnv(t, func(o *node.Options) {
		o.Agent.LLM = model
		o.Agent.File = dynconfig.Patch{RespondMode: dynconfig.All, ContextHistory: 20}
	})
	e.llm = srv
	e.say(e.ac, e.alice, "how far is mars?")
	testwait.For(t, "a lesson from the failed call", func() bool { return len(e.n.Agent().Lessons()) == 1 })
	e.say(e.ac, e.alice, "which planet is mars?")
	e.waitReplies(1)
	e.say(e.ac, e.alice, "that's wrong, Mars is the fourth planet but you should cite the source")
	testwait.For(t, "a lesson from the correction", func() bool { return len(e.n.Agent().Lessons()) == 2 })
	if _, ok := srv.WaitRequests(3, testwait.Scaled(5*time.Second)); !ok {
		t.Fatal("no third model call")
	}
	e.say(e.ac, e.alice, "ok, next question")
	if _, ok := srv.WaitRequests(4, testwait.Scaled(5*time.Second)); !ok {
		t.Fatal("no fourth model call")
	}
	p := srv.LastPrompt()
	if !strings.Contains(p, "LESSONS") || !strings.Contains(p, "cite the source") {
		t.Fatalf("lessons not in the prompt:\n%s", p)
	}
}
