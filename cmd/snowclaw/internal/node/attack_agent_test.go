package node_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
	"github.com/nbd-wtf/go-nostr/nip44"
	"github.com/ollama/ollama/api"
	agentmem "github.com/snowclaw/snowclaw/agent/memory"
	"github.com/snowclaw/snowclaw/internal/testwait"
)

// Finding 2: a correction said in private (or in a private group) became
// a global lesson, put into every prompt, with the person's npub, and
// survived their destroy, a restart and a reindex.

// lessonsOf is the LESSONS section of a request's system prompt (the last
// section of it): history may repeat a correction, the lessons must not.
func lessonsOf(req api.ChatRequest) string {
	if len(req.Messages) == 0 {
		return ""
	}
	_, after, _ := strings.Cut(req.Messages[0].Content, "\nLESSONS\n")
	return after
}

// ask sends a message that the agent answers and returns the model
// request of that answer.
func (e *agentEnv) ask(send func()) api.ChatRequest {
	e.t.Helper()
	n := len(e.llm.Requests())
	send()
	reqs, ok := e.llm.WaitRequests(n+1, testwait.Scaled(5*time.Second))
	if !ok {
		e.t.Fatal("the agent did not call the model")
	}
	return reqs[len(reqs)-1]
}

// lessonEvents are the agent's stored lesson events, read with the
// agent's key (which reads everything).
func (e *agentEnv) lessonEvents() []*nostr.Event {
	e.t.Helper()
	evs, _ := fetch(e.t, e.connect(&e.agent), nostr.Filter{Kinds: []int{30078}, Authors: []string{e.agent.pk}})
	var out []*nostr.Event
	for _, ev := range evs {
		if strings.HasPrefix(ev.Tags.GetD(), "snow:memory:lesson/") {
			out = append(out, ev)
		}
	}
	return out
}

func lessonWith(ls []agentmem.Lesson, text string) (agentmem.Lesson, bool) {
	for _, l := range ls {
		if strings.Contains(l.Text, text) {
			return l, true
		}
	}
	return agentmem.Lesson{}, false
}

func TestAttack_LessonsStayWhereTheyWereSaid(t *testing.T) {
	e := startAgentEnv(t)
	aliceNpub, _ := nip19.EncodePublicKey(e.alice.pk)
	const diag, locker, vault = "lupus-canary-7781", "locker-canary-4417", "vault-canary-5150"

	// Alice corrects the agent twice in private
	e.dm(e.alice, "that's wrong, my diagnosis is "+diag)
	e.dm(e.alice, "that's wrong, my locker code is "+locker)
	// Bob corrects it in the private group, right after it spoke
	e.say(e.bc, e.bob, "@Snowclaw what is the vault code?")
	e.waitReplies(1)
	testwait.For(t, "the agent's reply in its buffer", func() bool {
		h := e.n.Agent().History(agentGroup)
		return len(h) > 0 && h[len(h)-1].Self
	})
	e.say(e.bc, e.bob, "@Snowclaw that's wrong, the vault code is "+vault)
	testwait.For(t, "the group lesson", func() bool { _, ok := lessonWith(e.n.Agent().Lessons(), vault); return ok })
	e.waitReplies(2) // its answer to the correction: no model call is pending
	e.settle()
	if l, _ := lessonWith(e.n.Agent().Lessons(), diag); l.Tier != "private" || l.Subject != e.alice.pk {
		t.Fatalf("the private correction became %+v", l)
	}

	// a stranger in a public group sees none of it, nor who said it
	oc := e.connect(&e.owner)
	e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", "pubroom"}, {"public"}, {"open"}}, ""))
	stranger := newUser()
	sc := e.connect(&stranger)
	e.mustPublish(sc, mkEvent(stranger, 9021, nostr.Tags{{"h", "pubroom"}}, ""))
	req := e.ask(func() {
		e.mustPublish(sc, mkEvent(stranger, 9, nostr.Tags{{"h", "pubroom"}}, "@Snowclaw what is the vault code and my diagnosis?"))
	})
	all := strings.Join(contents(req), "\n")
	for _, leak := range []string{diag, locker, vault, aliceNpub, e.alice.pk, e.bob.pk} {
		if strings.Contains(all, leak) {
			t.Errorf("the public group's prompt holds %q:\n%s", leak, all)
		}
	}
	// nor does Bob in private, nor Alice in another group
	req = e.ask(func() { e.dm(e.bob, "Snowclaw, what is my diagnosis?") })
	if l := lessonsOf(req); strings.Contains(l, diag) || strings.Contains(l, locker) {
		t.Errorf("Alice's private lesson in Bob's private prompt:\n%s", l)
	}
	e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", "otherroom"}}, ""))
	e.mustPublish(e.ac, mkEvent(e.alice, 9021, nostr.Tags{{"h", "otherroom"}}, ""))
	req = e.ask(func() {
		e.mustPublish(e.ac, mkEvent(e.alice, 9, nostr.Tags{{"h", "otherroom"}}, "@Snowclaw what is the vault code?"))
	})
	if all := strings.Join(contents(req), "\n"); strings.Contains(all, vault) || strings.Contains(all, diag) {
		t.Errorf("another group's prompt holds a lesson of %s or a private one:\n%s", agentGroup, all)
	}
	// where the words were said, the lesson is used
	req = e.ask(func() { e.say(e.ac, e.alice, "@Snowclaw remind me of the vault code") })
	if l := lessonsOf(req); !strings.Contains(l, vault) || strings.Contains(l, diag) {
		t.Errorf("the group's prompt: lessons %q, want Bob's group lesson only", l)
	}
	req = e.ask(func() { e.dm(e.alice, "Snowclaw, hello again") })
	if l := lessonsOf(req); !strings.Contains(l, diag) || !strings.Contains(l, locker) || strings.Contains(l, vault) {
		t.Errorf("Alice's private prompt: lessons %q, want her two private lessons", l)
	}

	// stored with their tier: Alice's encrypted to her, Bob's in the group
	for _, ev := range e.lessonEvents() {
		if strings.Contains(ev.Content, diag) || strings.Contains(ev.Content, locker) {
			t.Errorf("a private lesson is stored in clear: %s", mustJSON(ev))
		}
	}
	priv, _ := fetch(t, e.connect(&e.alice), nostr.Filter{Kinds: []int{30078}, Authors: []string{e.agent.pk}, Tags: nostr.TagMap{"p": {e.alice.pk}}})
	opened := 0
	key, _ := nip44.GenerateConversationKey(e.agent.pk, e.alice.sk)
	for _, ev := range priv {
		if plain, err := nip44.Decrypt(ev.Content, key); err == nil && strings.Contains(plain, "canary") {
			opened++
		}
	}
	if opened != 2 {
		t.Errorf("Alice opens %d of her 2 lessons with her own key", opened)
	}

	// export: Alice's has her lessons and not Bob's; Bob's has his
	exportOf := func(u user) string {
		code, x := e.api(&u, "GET", "/api/v1/export", nil)
		if code != 200 {
			t.Fatalf("export: %d %v", code, x)
		}
		return mustJSON(x)
	}
	if x := exportOf(e.alice); !strings.Contains(x, diag) || !strings.Contains(x, locker) || strings.Contains(x, vault) {
		t.Errorf("Alice's export: want her two lessons and not Bob's:\n%s", x)
	}
	if x := exportOf(e.bob); !strings.Contains(x, vault) || strings.Contains(x, diag) {
		t.Errorf("Bob's export: want his lesson only:\n%s", x)
	}

	// forget by topic removes one lesson from RAM and from the store
	dl, _ := lessonWith(e.n.Agent().Lessons(), diag)
	if code, res := e.api(&e.alice, "POST", "/api/v1/privacy/forget", map[string]any{"topic": agentmem.LessonTopic(dl.ID)}); code != 200 || res["deleted"] != float64(1) {
		t.Fatalf("forget by topic: %d %v", code, res)
	}
	if _, ok := lessonWith(e.n.Agent().Lessons(), diag); ok {
		t.Error("the forgotten lesson is still in RAM")
	}
	for _, ev := range e.lessonEvents() {
		if ev.Tags.GetD() == "snow:memory:lesson/"+dl.ID {
			t.Errorf("the forgotten lesson is still stored: %s", ev.ID)
		}
	}
	req = e.ask(func() { e.dm(e.alice, "Snowclaw, and now?") })
	if l := lessonsOf(req); strings.Contains(l, diag) || !strings.Contains(l, locker) {
		t.Errorf("after forget, Alice's lessons %q", l)
	}

	// destroy removes the rest, also after a restart and a reindex
	_, res := e.api(&e.alice, "POST", "/api/v1/privacy/destroy", nil)
	if code, res := e.api(&e.alice, "POST", "/api/v1/privacy/destroy", map[string]any{"token": res["token"]}); code != 200 {
		t.Fatalf("destroy: %d %v", code, res)
	}
	gone := func(when string) {
		t.Helper()
		if l, ok := lessonWith(e.n.Agent().Lessons(), locker); ok {
			t.Errorf("%s: Alice's lesson is in RAM: %+v", when, l)
		}
		key, _ := nip44.GenerateConversationKey(e.alice.pk, e.agent.sk)
		for _, ev := range e.lessonEvents() {
			plain, _ := nip44.Decrypt(ev.Content, key)
			if hasTag(ev, "p", e.alice.pk) || strings.Contains(plain, locker) {
				t.Errorf("%s: Alice's lesson is stored: %s", when, ev.ID)
			}
		}
		if _, ok := lessonWith(e.n.Agent().Lessons(), vault); !ok {
			t.Errorf("%s: Bob's lesson went with Alice's destroy", when)
		}
	}
	gone("after destroy")
	e.opts.Search.ForceRebuild = true
	e.restart()
	e.ac, e.bc = e.connect(&e.alice), e.connect(&e.bob)
	gone("after restart and reindex")
	req = e.ask(func() { e.dm(e.alice, "Snowclaw, do you remember me?") })
	if all := strings.Join(contents(req), "\n"); strings.Contains(all, locker) || strings.Contains(all, diag) {
		t.Errorf("after destroy, restart and reindex, Alice's prompt holds her lessons:\n%s", all)
	}

	// Bob's group lesson is listed to the group as a group memory; Bob,
	// whose words it holds, forgets it by id, another member cannot
	var bobs string
	for _, mv := range e.list(&e.bob, "?tier=group") {
		if strings.Contains(mv.Text, vault) {
			bobs = mv.ID
		}
	}
	if bobs == "" {
		t.Fatal("Bob's group lesson is not listed to the group")
	}
	carol := newUser()
	e.mustPublish(e.connect(&carol), mkEvent(carol, 9021, nostr.Tags{{"h", agentGroup}}, ""))
	if len(e.list(&carol, "?tier=group")) == 0 {
		t.Fatal("carol, a member, reads no group memory")
	}
	if code, msg := e.v1(&carol, "DELETE", "/api/v1/memories/"+bobs, nil, nil); !strings.HasPrefix(msg, "restricted:") {
		t.Errorf("another member forgetting Bob's lesson: %d %s", code, msg)
	}
	if code, msg := e.v1(&e.bob, "DELETE", "/api/v1/memories/"+bobs, nil, nil); code != 200 {
		t.Fatalf("Bob forgetting his lesson: %d %s", code, msg)
	}
	if _, ok := lessonWith(e.n.Agent().Lessons(), vault); ok {
		t.Error("Bob's forgotten lesson is still in RAM")
	}
}

// TestAttack_LessonsLegacyGlobalDropped is the migration: a correction
// stored as a global lesson before lessons had a scope (whose words it
// holds is unknown) is dropped on start, its event deleted, and never
// shown; the agent's own failure lessons stay global.
func TestAttack_LessonsLegacyGlobalDropped(t *testing.T) {
	e := startAgentEnv(t)
	const leak = "legacy-canary-2024"
	legacy := func(id, text, source string) nostr.Event {
		on := true
		body, _ := json.Marshal(map[string]any{"summary": text, "snowclaw": map[string]any{"kind": "lesson", "id": id, "source": source, "enabled": on}})
		key, _ := nip44.GenerateConversationKey(e.agent.pk, e.agent.sk)
		content, _ := nip44.Encrypt(string(body), key)
		evt := nostr.Event{Kind: 30078, CreatedAt: nostr.Now(), Content: content, Tags: nostr.Tags{
			{"d", "snow:memory:lesson/" + id}, {"snow:tier", "internal"}, {"encrypted", "nip44"}, {"t", "lesson"},
		}}
		evt.Sign(e.agent.sk)
		return evt
	}
	ag := e.connect(&e.agent)
	old := e.mustPublish(ag, legacy("aaaaaaaaaaaa", "alice corrected you: "+leak, "correction"))
	e.mustPublish(ag, legacy("bbbbbbbbbbbb", "A model call failed: timeout-canary", "llm_failure"))
	e.restart()
	e.ac, e.bc = e.connect(&e.alice), e.connect(&e.bob)
	if _, ok := lessonWith(e.n.Agent().Lessons(), leak); ok {
		t.Fatal("the legacy unscoped correction was loaded")
	}
	if _, ok := lessonWith(e.n.Agent().Lessons(), "timeout-canary"); !ok {
		t.Fatal("the agent's own failure lesson was dropped")
	}
	req := e.ask(func() { e.say(e.bc, e.bob, "@Snowclaw hello") })
	if all := strings.Join(contents(req), "\n"); strings.Contains(all, leak) || !strings.Contains(lessonsOf(req), "timeout-canary") {
		t.Errorf("prompt after the migration:\n%s", all)
	}
	if err := e.n.Agent().Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, ev := range e.lessonEvents() {
		if ev.ID == old.ID {
			t.Fatal("the legacy correction's event is still stored")
		}
	}
}

func contents(req api.ChatRequest) []string {
	out := make([]string, len(req.Messages))
	for i, m := range req.Messages {
		out[i] = m.Content
	}
	return out
}
