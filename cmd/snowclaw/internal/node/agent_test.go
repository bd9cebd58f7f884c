package node_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
	"github.com/ollama/ollama/api"
	"github.com/snowclaw/snowclaw/agent"
	"github.com/snowclaw/snowclaw/agent/dynconfig"
	"github.com/snowclaw/snowclaw/agent/llm"
	"github.com/snowclaw/snowclaw/agent/llm/llmtest"
	"github.com/snowclaw/snowclaw/agent/privmsg"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/internal/wsclient"
)

const agentGroup = "agentroom"

// agentEnv is a relay with search and the agent on, the agent's model a
// local server speaking Ollama's /api/chat, and a group where alice and
// bob talk.
type agentEnv struct {
	*testEnv
	llm        *llmtest.Server
	alice, bob user
	ac, bc     *wsclient.Client
}

func startAgentEnv(t *testing.T, mods ...func(*node.Options)) *agentEnv {
	t.Helper()
	return startAgentEnvWith(t, func(req api.ChatRequest) (string, error) {
		return "ack from the model", nil
	}, mods...)
}

// startAgentEnvWith is startAgentEnv with the model's answers scripted.
func startAgentEnvWith(t *testing.T, reply llmtest.ReplyFunc, mods ...func(*node.Options)) *agentEnv {
	t.Helper()
	srv := llmtest.NewServer(t, reply)
	model, err := llm.NewOllama(llm.OllamaOptions{Host: srv.URL, Model: "test-model", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	all := append([]func(*node.Options){withSearch, func(o *node.Options) {
		o.Agent = node.AgentOptions{Enabled: true, Options: agent.Options{
			Name: "Snowclaw", LLM: model,
			File:          dynconfig.Patch{RespondMode: dynconfig.Mention, ContextHistory: 20},
			FlushInterval: 200 * time.Millisecond,
		}}
	}}, mods...)
	e := &agentEnv{testEnv: startEnv(t, all...), llm: srv, alice: newUser(), bob: newUser()}
	oc := e.connect(&e.owner)
	e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", agentGroup}}, ""))
	e.mustPublish(oc, mkEvent(e.owner, 9002, nostr.Tags{{"h", agentGroup}, {"name", "Agent Room"}, {"about", "Planning the moon base launch"}}, ""))
	e.ac, e.bc = e.connect(&e.alice), e.connect(&e.bob)
	e.mustPublish(e.ac, mkEvent(e.alice, 0, nil, `{"name":"alice"}`))
	e.mustPublish(e.bc, mkEvent(e.bob, 0, nil, `{"name":"bob"}`))
	e.mustPublish(e.ac, mkEvent(e.alice, 9021, nostr.Tags{{"h", agentGroup}}, ""))
	e.mustPublish(e.bc, mkEvent(e.bob, 9021, nostr.Tags{{"h", agentGroup}}, ""))
	return e
}

func (e *agentEnv) say(c *wsclient.Client, u user, text string, tags ...nostr.Tag) nostr.Event {
	e.t.Helper()
	return e.mustPublish(c, mkEvent(u, 9, append(nostr.Tags{{"h", agentGroup}}, tags...), text))
}

// settle waits until the agent has handled everything fed to it.
func (e *agentEnv) settle() {
	e.t.Helper()
	testwait.For(e.t, "the agent to catch up", e.n.Agent().Idle)
}

// replies returns the agent's kind 9 messages in the group, as a member
// reads them.
func (e *agentEnv) replies() []*nostr.Event {
	e.t.Helper()
	evs, closed := fetch(e.t, e.ac, nostr.Filter{Kinds: []int{9}, Authors: []string{e.agent.pk}, Tags: nostr.TagMap{"h": {agentGroup}}})
	if closed != "" {
		e.t.Fatalf("reading replies: %s", closed)
	}
	return evs
}

func (e *agentEnv) waitReplies(n int) []*nostr.Event {
	e.t.Helper()
	var got []*nostr.Event
	if !testwait.Until(testwait.DefaultTimeout, func() bool { got = e.replies(); return len(got) >= n }) {
		e.t.Fatalf("agent replies = %d, want %d", len(got), n)
	}
	return got
}

func TestAgent_AnswersOnlyWhenMentioned(t *testing.T) {
	e := startAgentEnv(t)
	// the owner notes something about alice through the API the CLI uses
	e.n.Agent().AddOwnerNote(e.alice.pk, "leads the propulsion team")
	for i := 0; i < 25; i++ {
		e.say(e.bc, e.bob, "status line "+string(rune('a'+i%26))+" about fuel margins")
	}
	e.say(e.ac, e.alice, "no mention here, just chatting")
	e.settle()
	if n := len(e.llm.Requests()); n != 0 {
		t.Fatalf("model called %d times without a mention", n)
	}
	q := e.say(e.ac, e.alice, "@Snowclaw what is the launch window?")
	reqs, ok := e.llm.WaitRequests(1, testwait.Scaled(5*time.Second))
	if !ok {
		t.Fatal("model not called on a mention")
	}
	prompt := e.llm.LastPrompt()
	for _, want := range []string{
		"Planning the moon base launch", // group memory (purpose from 39000)
		"leads the propulsion team",     // sender's notes
		"[nostr:group=#" + agentGroup + " from=alice kind=9 id=" + q.ID[:8] + "]",
		"what is the launch window?",
	} {
		if !strings.Contains(prompt, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	// the last 20 messages (context_history) and not the older ones
	if strings.Contains(prompt, "status line a about") || !strings.Contains(prompt, "status line y about") {
		t.Errorf("history is not the last context_history messages:\n%s", prompt)
	}
	if len(reqs[0].Messages) < 2 || reqs[0].Messages[0].Role != "system" {
		t.Errorf("want a system message first, got %+v", reqs[0].Messages)
	}
	got := e.waitReplies(1)
	r := got[0]
	if r.Content != "ack from the model" || !hasTag(r, "e", q.ID) || !hasTag(r, "h", agentGroup) {
		t.Fatalf("reply = %q tags %v", r.Content, r.Tags)
	}
	// a message from a non-member never reaches the group, so it cannot
	// trigger the agent either
	stranger := newUser()
	sc := e.connect(&stranger)
	e.refusedWith(sc, mkEvent(stranger, 9, nostr.Tags{{"h", agentGroup}}, "@Snowclaw hi"), "restricted:")
}

func hasTag(evt *nostr.Event, key, value string) bool {
	for _, t := range evt.Tags {
		if len(t) >= 2 && t[0] == key && t[1] == value {
			return true
		}
	}
	return false
}

func TestAgent_OwnerConfigAppliesLive(t *testing.T) {
	e := startAgentEnv(t)
	oc := e.connect(&e.owner)
	// a member's config event is refused by the relay and changes nothing
	e.refusedWith(e.ac, mkEvent(e.alice, 30078, nostr.Tags{{"d", "snowclaw:config:group:" + agentGroup}, {"h", agentGroup}}, `{"respond_mode":"all"}`), "restricted:")
	e.say(e.ac, e.alice, "plain message one")
	e.settle()
	if n := len(e.llm.Requests()); n != 0 {
		t.Fatalf("model called %d times after a non-owner config event", n)
	}
	// the owner switches the group to all: every message is answered
	config := func(content string, at nostr.Timestamp) {
		t.Helper()
		evt := nostr.Event{Kind: 30078, CreatedAt: at, Tags: nostr.Tags{{"d", "snowclaw:config:group:" + agentGroup}, {"h", agentGroup}}, Content: content}
		evt.Sign(e.owner.sk)
		e.mustPublish(oc, evt)
	}
	// each version a second later: same-second versions of an address
	// tie, and the relay keeps only one
	now := nostr.Now()
	config(`{"respond_mode":"all"}`, now)
	e.say(e.bc, e.bob, "plain message two")
	e.say(e.ac, e.alice, "plain message three")
	if reqs, ok := e.llm.WaitRequests(2, testwait.Scaled(5*time.Second)); !ok {
		t.Fatalf("respond_mode=all not applied: %d model calls", len(reqs))
	}
	e.waitReplies(2)
	// mention only, history 3: the next mention sees the last 3 messages
	config(`{"respond_mode":"mention","context_history":3}`, now+1)
	for _, s := range []string{"m1", "m2", "m3", "m4"} {
		e.say(e.bc, e.bob, "history "+s)
	}
	e.say(e.ac, e.alice, "@Snowclaw summarise")
	if reqs, ok := e.llm.WaitRequests(3, testwait.Scaled(5*time.Second)); !ok || len(reqs) != 3 {
		t.Fatalf("want exactly one more model call, got %d", len(reqs))
	}
	last := e.llm.LastPrompt()
	if !strings.Contains(last, "summarise") || strings.Contains(last, "history m1") || !strings.Contains(last, "history m2") || !strings.Contains(last, "history m4") {
		t.Fatalf("context_history=3 not applied:\n%s", last)
	}
	// and none: nothing more is sent to the model
	e.waitReplies(3)
	config(`{"respond_mode":"none"}`, now+2)
	e.say(e.ac, e.alice, "@Snowclaw are you there?")
	e.settle() // Idle counts queued replies too: a model call would be made by now
	if n := len(e.llm.Requests()); n != 3 {
		t.Fatalf("respond_mode=none: model called %d more times", n-3)
	}
}

func TestAgent_NsecNeverReachesModelIndexOrLogs(t *testing.T) {
	logs := new(syncBuffer)
	e := startAgentEnv(t, func(o *node.Options) {
		o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	leak := newUser()
	nsec, _ := nip19.EncodePrivateKey(leak.sk)
	e.say(e.ac, e.alice, "oops my key is "+nsec+" please ignore")
	e.say(e.bc, e.bob, "@Snowclaw did someone post a key?")
	if _, ok := e.llm.WaitRequests(1, testwait.Scaled(5*time.Second)); !ok {
		t.Fatal("model not called")
	}
	prompt := e.llm.LastPrompt()
	if strings.Contains(prompt, nsec) || strings.Contains(prompt, leak.sk) {
		t.Fatal("the nsec reached the model's prompt")
	}
	if !strings.Contains(prompt, "[redacted nsec]") {
		t.Fatalf("prompt lacks the redaction marker:\n%s", prompt)
	}
	e.settle()
	snap, _ := e.n.Agent().Get(mustSubject(t, "group:"+agentGroup))
	for _, m := range snap.History {
		if strings.Contains(m.Content, nsec) {
			t.Fatal("the nsec is in the agent's ring buffer")
		}
	}
	e.stop() // flush and close, so everything is on disk
	if found := grepDir(t, e.dir, nsec); len(found) > 0 {
		// the chat event itself is stored as sent (the relay keeps what
		// members wrote); the index and logs must not have it
		for _, f := range found {
			if strings.Contains(f, "search") {
				t.Errorf("nsec found in the search index: %s", f)
			}
		}
	}
	if strings.Contains(logs.String(), nsec) {
		t.Fatal("the nsec is in the logs")
	}
}

func TestAgent_PrivateMessageGetsPrivateReply(t *testing.T) {
	e := startAgentEnv(t)
	wrap, err := privmsg.Wrap(context.Background(), e.alice.sk, e.agent.pk, "Snowclaw, remember that my cat is called Miso", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.mustPublish(e.ac, wrap)
	if _, ok := e.llm.WaitRequests(1, testwait.Scaled(5*time.Second)); !ok {
		t.Fatal("model not called for a private message")
	}
	if p := e.llm.LastPrompt(); strings.Contains(p, "#"+agentGroup) {
		t.Fatalf("private prompt carries group context:\n%s", p)
	}
	var reply *privmsg.Message
	testwait.For(t, "the agent's private reply", func() bool {
		evs, _ := fetch(t, e.ac, nostr.Filter{Kinds: []int{1059}, Tags: nostr.TagMap{"p": {e.alice.pk}}})
		for _, w := range evs {
			m, err := privmsg.Unwrap(context.Background(), w, e.alice.sk)
			if err == nil && m.From == e.agent.pk {
				reply = &m
			}
		}
		return reply != nil
	})
	if reply.Content != "ack from the model" {
		t.Fatalf("no private reply from the agent: %+v", reply)
	}
	// bob cannot read alice's private reply
	evs, _ := fetch(t, e.bc, nostr.Filter{Kinds: []int{1059}, Tags: nostr.TagMap{"p": {e.alice.pk}}})
	if len(evs) != 0 {
		t.Fatalf("bob reads %d gift wraps addressed to alice", len(evs))
	}
	// the private memory is alice's: stored encrypted, readable by her
	e.settle()
	items := e.n.Agent().Items()
	if len(items) != 1 || items[0].Subject != e.alice.pk || !strings.Contains(items[0].Text, "Miso") {
		t.Fatalf("private memory items = %+v", items)
	}
}

func mustSubject(t *testing.T, s string) agent.Subject {
	t.Helper()
	sub, err := agent.ParseSubject(s)
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// syncBuffer collects log output written from many goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// grepDir lists the files under dir whose bytes contain s.
func grepDir(t *testing.T, dir, s string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && bytes.Contains(b, []byte(s)) {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
