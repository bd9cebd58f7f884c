package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/ollama/ollama/api"
	"github.com/snowclaw/snowclaw/agent/llm/llmtest"
	"github.com/snowclaw/snowclaw/internal/pgtest"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/internal/wsclient"
	"github.com/snowclaw/snowclaw/relay"
)

// sharedData is a data directory holding the keys of keys' directory, as
// every instance of one deployment must.
func sharedData(t *testing.T, keys string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{relay.RelayKeyFile, relay.AgentKeyFile} {
		b, err := os.ReadFile(filepath.Join(keys, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// waitLog waits until c's log says s.
func waitLog(t *testing.T, c *child, s string, within time.Duration) {
	t.Helper()
	if !testwait.Until(within, func() bool { return strings.Contains(logOf(c), s) }) {
		t.Fatalf("%q not logged within %s; stderr:\n%s", s, within, logOf(c))
	}
}

func logOf(c *child) string {
	w := c.cmd.Stderr.(*lockedWriter)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// agentReplies waits until msg has at least one reply by the agent and
// returns how many it has.
func agentReplies(t *testing.T, c *wsclient.Client, agent string, msg nostr.Event) int {
	t.Helper()
	n := 0
	testwait.Within(t, 20*time.Second, fmt.Sprintf("a reply to %q", msg.Content), func() bool {
		evs, _, err := c.Fetch(nostr.Filter{Kinds: []int{9}, Authors: []string{agent}, Tags: nostr.TagMap{"e": {msg.ID}}}, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		n = len(evs)
		return n > 0
	})
	return n
}

// TestProcess_LeaderKillNineHandsOver: two `snowclaw serve` over one
// PostgreSQL. The leader is killed with SIGKILL while its model is still
// writing a reply; the other instance takes over within 10 s and answers
// that message and one sent while nobody led, each exactly once.
func TestProcess_LeaderKillNineHandsOver(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	url := pgtest.New(t)
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	model := llmtest.NewServer(t, func(req api.ChatRequest) (string, error) {
		last := req.Messages[len(req.Messages)-1].Content
		if strings.Contains(last, "hold this one") {
			select { // the first leader dies before this answer
			case <-release:
			case <-time.After(time.Minute):
			}
		}
		return "ack from the model", nil
	})
	model.SetModels("llama3.2")
	t.Setenv("SNOWCLAW_AGENT_LLM", "ollama")
	t.Setenv("SNOWCLAW_AGENT_OLLAMA_HOST", model.URL)
	t.Setenv("SNOWCLAW_AGENT_OLLAMA_MODEL", "llama3.2")
	t.Setenv("SNOWCLAW_AGENT_LEARNING_ENABLED", "false")

	owner, alice := newKey(), newKey()
	keys := t.TempDir()
	if _, err := relay.LoadKeys(keys, true); err != nil {
		t.Fatal(err)
	}
	first := startChild(t, sharedData(t, keys), "--owner", owner.npub, "--store-url", url)
	waitLog(t, first, "leading: this instance runs the agent", 20*time.Second)
	second := startChild(t, sharedData(t, keys), "--owner", owner.npub, "--store-url", url)

	oc, ac := authed(t, second.url, owner), authed(t, second.url, alice)
	publishOK(t, oc, signed(owner, 9007, nostr.Tags{{"h", "crew"}}, ""))
	publishOK(t, oc, signed(owner, 9000, nostr.Tags{{"h", "crew"}, {"p", alice.pk}}, ""))
	held := signed(alice, 9, nostr.Tags{{"h", "crew"}}, "Snowclaw, hold this one: when do we launch?")
	publishOK(t, ac, held)
	if _, ok := model.WaitRequests(1, 20*time.Second); !ok {
		t.Fatalf("the leader never asked the model; stderr:\n%s", logOf(first))
	}
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	first.cmd.Wait()
	killed := time.Now()
	gap := signed(alice, 9, nostr.Tags{{"h", "crew"}}, "Snowclaw, and who flies?")
	publishOK(t, ac, gap)
	once.Do(func() { close(release) }) // the dead leader's call may end now

	waitLog(t, second, "leading: this instance runs the agent", 10*time.Second)
	t.Logf("takeover %s after the kill", time.Since(killed).Round(time.Millisecond))

	agentPK := agentKey(t, keys)
	agentReplies(t, ac, agentPK, held)
	agentReplies(t, ac, agentPK, gap)
	// a later message's answer is the barrier: the catch-up came first
	later := signed(alice, 9, nostr.Tags{{"h", "crew"}}, "Snowclaw, thanks!")
	publishOK(t, ac, later)
	agentReplies(t, ac, agentPK, later)
	for _, m := range []nostr.Event{held, gap, later} {
		if n := agentReplies(t, ac, agentPK, m); n != 1 {
			t.Fatalf("%d replies to %q, want exactly 1", n, m.Content)
		}
	}
}

// agentKey is the agent's public key from the keys' directory.
func agentKey(t *testing.T, dir string) string {
	t.Helper()
	k, err := relay.LoadKeys(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := nostr.GetPublicKey(k.AgentSecret)
	if err != nil {
		t.Fatal(err)
	}
	return pk
}
