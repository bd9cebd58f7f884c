package node_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/ollama/ollama/api"
	"github.com/snowclaw/snowclaw/agent"
	"github.com/snowclaw/snowclaw/agent/dynconfig"
	"github.com/snowclaw/snowclaw/agent/llm"
	"github.com/snowclaw/snowclaw/agent/llm/llmtest"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/pgtest"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/internal/wsclient"
	"go.uber.org/goleak"
)

// TestMain runs the tests, stops the PostgreSQL cluster, and then fails
// the run if anything a test started is still running: every node is
// closed by its test's cleanup, and a goroutine that outlives it (a
// journal follower reconnecting to its dropped database once a second,
// say) costs every later test, and an operator's process that reopens a
// node, for as long as the process lives.
func TestMain(m *testing.M) {
	code := pgtest.Main(m)
	if code == 0 {
		if err := goleak.Find(leakOptions...); err != nil {
			fmt.Fprintf(os.Stderr, "goroutines still running after every test ended:\n%v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// leakOptions are the goroutines that live as long as the process by
// design, none of them the relay's: khatru (the remote relays of these
// tests) starts its NIP-40 manager on context.Background with no way to
// stop it, and golang-lru's expirable cache (v2) never closes its
// sweeper's channel.
var leakOptions = []goleak.Option{
	goleak.IgnoreTopFunction("github.com/fiatjaf/khatru.(*expirationManager).start"),
	goleak.IgnoreTopFunction("github.com/hashicorp/golang-lru/v2/expirable.NewLRU[...].func1"),
}

// startCluster starts n nodes over one fresh PostgreSQL database, each
// with its own data directory (its index) and the same keys, as several
// `snowclaw serve` sharing one database behind a load balancer.
func startCluster(t *testing.T, n int, mods ...func(*node.Options)) []*testEnv {
	t.Helper()
	url := pgtest.New(t)
	first := startEnv(t, append(mods, func(o *node.Options) { o.PostgresURL = url })...)
	envs := []*testEnv{first}
	for i := 1; i < n; i++ {
		envs = append(envs, startEnv(t, append(mods, func(o *node.Options) {
			o.PostgresURL, o.Keys, o.Owner = url, first.opts.Keys, first.owner.pk
		})...))
		envs[i].owner, envs[i].agent, envs[i].relay = first.owner, first.agent, first.relay
	}
	return envs
}

// live subscribes c to f, waits for its EOSE and returns its id.
func live(t *testing.T, c *wsclient.Client, f nostr.Filter) string {
	t.Helper()
	sub := fmt.Sprintf("live%d", liveSeq.Add(1))
	ctx, cancel := answering()
	defer cancel()
	closed, err := c.SubscribeAgain(ctx, sub, f)
	if err != nil || closed != "" {
		t.Fatalf("no EOSE for %s: %v %s", sub, err, closed)
	}
	return sub
}

var liveSeq atomic.Int64 // tests run in parallel

// An event accepted by A reaches a live subscriber on B, under B's own
// read rule: a group's member gets it, a stranger does not.
func TestShared_LiveAcrossInstances(t *testing.T) {
	t.Parallel() // its own database and instances
	envs := startCluster(t, 2)
	a, b := envs[0], envs[1]
	alice, stranger := newUser(), newUser()
	oa := a.connect(&a.owner)
	a.mustPublish(oa, mkEvent(a.owner, 9007, nostr.Tags{{"h", "crew"}}, ""))
	a.mustPublish(oa, mkEvent(a.owner, 9000, nostr.Tags{{"h", "crew"}, {"p", alice.pk}}, ""))

	onB := b.connect(&alice)
	strangerOnB := b.connect(&stranger)
	subs := map[*wsclient.Client]string{
		onB:         live(t, onB, nostr.Filter{Kinds: []int{9}, Since: ptr(nostr.Now() - 5)}),
		strangerOnB: live(t, strangerOnB, nostr.Filter{Kinds: []int{1, 9}, Since: ptr(nostr.Now() - 5)}),
	}
	ca := a.connect(&alice)
	secret := a.mustPublish(ca, mkEvent(alice, 9, nostr.Tags{{"h", "crew"}}, "crew only"))
	waitEvent(t, onB, subs[onB], secret.ID)

	// barrier: a public note published after the group message reached
	// the stranger, so the group message would have too
	public := a.mustPublish(ca, mkEvent(alice, 1, nil, "hello everyone"))
	waitEvent(t, strangerOnB, subs[strangerOnB], public.ID)
	if strangerOnB.EventIDs(subs[strangerOnB])[secret.ID] {
		t.Fatal("a stranger on B received a private group's message published on A")
	}
}

// A memory stored on A is found by NIP-50 on B.
func TestShared_SearchOnBFindsMemoryFromA(t *testing.T) {
	t.Parallel() // its own database and instances
	envs := startCluster(t, 2, withSearch)
	a, b := envs[0], envs[1]
	alice := newUser()
	mem := a.mustPublish(a.connect(&alice), memory(alice, "kayak", `{"summary":"the red kayak lives in the boathouse by the pier"}`))
	cb := b.connect(&alice)
	testwait.For(t, "B's search to find the memory stored on A", func() bool {
		evs, closed := fetch(t, cb, nostr.Filter{Kinds: []int{30078}, Search: "kayak boathouse"})
		if closed != "" {
			t.Fatalf("search on B closed: %s", closed)
		}
		return contains(evs, mem.ID)
	})
	// restart B: its index replays the change log from its recorded
	// position, so a memory deleted on A while B was down leaves B's
	// index (no scan of the store could show a deletion)
	indexed := b.n.Search().Count()
	b.stop()
	a.mustPublish(a.connect(&alice), mkEvent(alice, 5, nostr.Tags{{"e", mem.ID}}, ""))
	b.start()
	if got := b.n.Search().Count(); got != indexed-1 {
		t.Fatalf("B's index holds %d documents after the restart, want %d (the memory deleted on A while B was down gone)", got, indexed-1)
	}
	evs, _ := fetch(t, b.connect(&alice), nostr.Filter{Kinds: []int{30078}, Search: "kayak boathouse"})
	if contains(evs, mem.ID) {
		t.Fatal("B's search still finds a memory deleted on A while B was down")
	}
}

// A member removed on A can no longer read the group on B, and a deletion
// made on B holds on A (it cannot be published again there).
func TestShared_RemovalAndDeletionHoldEverywhere(t *testing.T) {
	t.Parallel() // its own database and instances
	envs := startCluster(t, 2)
	a, b := envs[0], envs[1]
	alice, bob := newUser(), newUser()
	oa := a.connect(&a.owner)
	a.mustPublish(oa, mkEvent(a.owner, 9007, nostr.Tags{{"h", "crew"}}, ""))
	a.mustPublish(oa, mkEvent(a.owner, 9000, nostr.Tags{{"h", "crew"}, {"p", alice.pk}}, ""))
	a.mustPublish(oa, mkEvent(a.owner, 9000, nostr.Tags{{"h", "crew"}, {"p", bob.pk}}, ""))
	msg := a.mustPublish(a.connect(&alice), mkEvent(alice, 9, nostr.Tags{{"h", "crew"}}, "plans"))

	// the owner watches the group's moderation on B: once the removal
	// reaches that subscription, B's hooks (its group state) have run
	ob := b.connect(&b.owner)
	mod := live(t, ob, nostr.Filter{Kinds: []int{9001}, Tags: nostr.TagMap{"h": {"crew"}}})
	bobOnB := b.connect(&bob)
	if evs, closed := fetch(t, bobOnB, nostr.Filter{Kinds: []int{9}, Tags: nostr.TagMap{"h": {"crew"}}}); closed != "" || !contains(evs, msg.ID) {
		t.Fatalf("bob, a member, reads on B: %d events, closed %q", len(evs), closed)
	}
	removal := a.mustPublish(oa, mkEvent(a.owner, 9001, nostr.Tags{{"h", "crew"}, {"p", bob.pk}}, ""))
	waitEvent(t, ob, mod, removal.ID)
	evs, _ := fetch(t, bobOnB, nostr.Filter{Kinds: []int{9}, Tags: nostr.TagMap{"h": {"crew"}}})
	if contains(evs, msg.ID) {
		t.Fatal("bob, removed on A, still reads the group's messages on B")
	}

	// alice deletes her message on B; A refuses it back
	ca := a.connect(&alice)
	dels := live(t, ca, nostr.Filter{Kinds: []int{5}, Authors: []string{alice.pk}})
	del := b.mustPublish(b.connect(&alice), mkEvent(alice, 5, nostr.Tags{{"e", msg.ID}}, ""))
	waitEvent(t, ca, dels, del.ID)
	a.refusedWith(ca, msg, "blocked:")
	if evs, _ := fetch(t, ca, nostr.Filter{IDs: []string{msg.ID}}); len(evs) != 0 {
		t.Fatal("the message deleted on B is still served by A")
	}
}

// startAgentCluster is two nodes with search and the agent on, its model
// one fake Ollama, and a group where alice talks.
func startAgentCluster(t *testing.T) ([]*testEnv, *llmtest.Server, user) {
	t.Helper()
	srv := llmtest.NewServer(t, func(req api.ChatRequest) (string, error) { return "ack from the model", nil })
	model, err := llm.NewOllama(llm.OllamaOptions{Host: srv.URL, Model: "test-model", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	envs := startCluster(t, 2, withSearch, func(o *node.Options) {
		o.Agent = node.AgentOptions{Enabled: true, Options: agent.Options{
			Name: "Snowclaw", LLM: model,
			File:          dynconfig.Patch{RespondMode: dynconfig.Mention, ContextHistory: 20},
			FlushInterval: 200 * time.Millisecond,
		}}
	})
	alice := newUser()
	oc := envs[0].connect(&envs[0].owner)
	envs[0].mustPublish(oc, mkEvent(envs[0].owner, 9007, nostr.Tags{{"h", agentGroup}}, ""))
	envs[0].mustPublish(oc, mkEvent(envs[0].owner, 9000, nostr.Tags{{"h", agentGroup}, {"p", alice.pk}}, ""))
	return envs, srv, alice
}

// leaderOf waits until exactly one of envs leads and returns its index.
func leaderOf(t *testing.T, envs ...*testEnv) int {
	t.Helper()
	lead := -1
	testwait.Within(t, 15*time.Second, "a node to take the lead", func() bool {
		lead = -1
		for i, e := range envs {
			if e.srv != nil && e.n.Leading() {
				if lead >= 0 {
					t.Fatalf("nodes %d and %d both lead", lead, i)
				}
				lead = i
			}
		}
		return lead >= 0
	})
	return lead
}

// replies are the agent's answers to msg, as stored.
func replies(t *testing.T, e *testEnv, u *user, msg nostr.Event) []*nostr.Event {
	t.Helper()
	evs, _ := fetch(t, e.connect(u), nostr.Filter{Kinds: []int{9}, Authors: []string{e.agent.pk}, Tags: nostr.TagMap{"e": {msg.ID}}})
	return evs
}

// The agent runs on one node: a mention published on the other is answered
// once, by the leader, and the other's agent handles nothing. When the
// leader shuts down, the other takes over, answers the mention made while
// nobody led, and does not answer the first one again.
func TestShared_AgentRunsOnOneNode(t *testing.T) {
	t.Parallel() // its own database and instances
	envs, _, alice := startAgentCluster(t)
	li := leaderOf(t, envs...)
	lead, standby := envs[li], envs[1-li]
	onStandby := standby.connect(&alice)
	watch := live(t, onStandby, nostr.Filter{Kinds: []int{9}, Authors: []string{lead.agent.pk}})
	first := standby.mustPublish(onStandby, mkEvent(alice, 9, nostr.Tags{{"h", agentGroup}}, "Snowclaw, what is the launch date?"))
	testwait.For(t, "the leader's answer to a mention published on the other node", func() bool {
		return len(onStandby.EventIDs(watch)) > 0
	})
	if got := replies(t, standby, &alice, first); len(got) != 1 {
		t.Fatalf("%d replies to the first mention, want 1", len(got))
	}
	if h := standby.n.Agent().Stats().Handled; h != 0 {
		t.Fatalf("the standby node's agent handled %d events", h)
	}

	lead.stop() // the leader shuts down
	second := standby.mustPublish(onStandby, mkEvent(alice, 9, nostr.Tags{{"h", agentGroup}}, "Snowclaw, and the landing site?"))
	if leaderOf(t, standby) != 0 {
		t.Fatal("the remaining node did not take over")
	}
	testwait.For(t, "the new leader's answer to the mention made while nobody led", func() bool {
		return len(replies(t, standby, &alice, second)) > 0
	})
	testwait.For(t, "the new leader's agent to settle", standby.n.Agent().Idle)
	if n1, n2 := len(replies(t, standby, &alice, first)), len(replies(t, standby, &alice, second)); n1 != 1 || n2 != 1 {
		t.Fatalf("after the takeover: %d replies to the first mention and %d to the second, want 1 and 1", n1, n2)
	}
}

// A NIP-98 Authorization header used once on A is refused on B: a
// captured header cannot be replayed against another instance behind the
// same public URL.
func TestAttack_NIP98ReplayAcrossInstances(t *testing.T) {
	t.Parallel() // its own database and instances
	envs := startCluster(t, 2, func(o *node.Options) { o.ServiceURL = "wss://relay.example.com" })
	const path = "/api/v1/memories"
	header := nip98Header(envs[0].owner, "https://relay.example.com"+path, "GET")
	get := func(e *testEnv) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", e.httpURL(path), nil)
		req.Header.Set("Authorization", header)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(envs[0]); code != http.StatusOK {
		t.Fatalf("first use on A: %d %s", code, body)
	}
	if code, body := get(envs[1]); code != http.StatusUnauthorized || !strings.Contains(body, "already used") {
		t.Fatalf("the same header replayed on B: %d %s, want 401 already used", code, body)
	}
}

// Racing moderation on two nodes (bob added on A while removed on B, in
// the same second) leaves both nodes with the same members: each derives
// the group from the shared store, not from the order it heard of the
// changes.
func TestShared_RacingModerationConverges(t *testing.T) {
	t.Parallel() // its own database and instances
	envs := startCluster(t, 2)
	a, b := envs[0], envs[1]
	oa, ob := a.connect(&a.owner), b.connect(&b.owner)
	a.mustPublish(oa, mkEvent(a.owner, 9007, nostr.Tags{{"h", "crew"}}, ""))
	for round := range 40 {
		bob := newUser()
		a.mustPublish(oa, mkEvent(a.owner, 9000, nostr.Tags{{"h", "crew"}, {"p", bob.pk}}, ""))
		at := nostr.Now() + 1
		put := nostr.Event{Kind: 9000, CreatedAt: at, Tags: nostr.Tags{{"h", "crew"}, {"p", bob.pk}, {"p", bob.pk, "moderator"}}}
		remove := nostr.Event{Kind: 9001, CreatedAt: at, Tags: nostr.Tags{{"h", "crew"}, {"p", bob.pk}}}
		put.Sign(a.owner.sk)
		remove.Sign(a.owner.sk)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); _ = publish(oa, put) }()
		go func() { defer wg.Done(); _ = publish(ob, remove) }()
		wg.Wait()
		// a REQ waits until its node has applied everything committed
		// before it: after one on each node both have heard of both
		fetch(t, a.connect(nil), nostr.Filter{Kinds: []int{1}, Limit: 1})
		fetch(t, b.connect(nil), nostr.Filter{Kinds: []int{1}, Limit: 1})
		ga, _ := a.n.Groups().Snapshot("crew")
		gb, _ := b.n.Groups().Snapshot("crew")
		_, onA := ga.Members[bob.pk]
		_, onB := gb.Members[bob.pk]
		if onA != onB || !slices.Equal(ga.Members[bob.pk], gb.Members[bob.pk]) {
			t.Fatalf("round %d: bob on A: %v %v, on B: %v %v", round, onA, ga.Members[bob.pk], onB, gb.Members[bob.pk])
		}
	}
}

// The owner's agent routes answer on the leader and say 503 "retry" on a
// node whose agent stands by (it holds nothing to show).
func TestShared_AgentRoutesOnTheLeaderOnly(t *testing.T) {
	t.Parallel() // its own database and instances
	envs, _, _ := startAgentCluster(t)
	li := leaderOf(t, envs...)
	lead, standby := envs[li], envs[1-li]
	if code, body := lead.api(&lead.owner, "GET", "/api/v1/agent/stats", nil); code != http.StatusOK {
		t.Fatalf("stats on the leader: %d %v", code, body)
	}
	code, body := standby.api(&standby.owner, "GET", "/api/v1/agent/stats", nil)
	if code != http.StatusServiceUnavailable || !strings.Contains(fmt.Sprint(body["error"]), "another instance") {
		t.Fatalf("stats on the standby node: %d %v, want 503 naming the leader", code, body)
	}
}

// Text PostgreSQL cannot hold (a NUL character) is refused as invalid:,
// the store's own reason, not as the relay's failure (error:).
func TestShared_UnstorableTextIsInvalid(t *testing.T) {
	t.Parallel() // its own database and instances
	e := startCluster(t, 1)[0]
	alice := newUser()
	c := e.connect(&alice)
	e.refusedWith(c, mkEvent(alice, 1, nil, "a\x00b"), "invalid:")
	e.mustPublish(c, mkEvent(alice, 1, nil, "ab")) // and the connection goes on
}
