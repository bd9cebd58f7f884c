package node_test

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/policies"
)

// TestMetrics_Exposition: /metrics is the Prometheus text format with
// the standard go_* and process_* series beside every series dashboards
// already read, and snowclaw_build_info naming this build; no sample
// carries an instance label of the relay's own (scrape checks every one),
// even with relay.instance_id set.
func TestMetrics_Exposition(t *testing.T) {
	e := startAgentEnv(t, withMetrics)
	got := e.scrape()
	want := []string{
		"go_goroutines", "go_memstats_alloc_bytes", "go_memstats_heap_inuse_bytes", "go_gc_duration_seconds_count", `go_info{version="` + runtime.Version() + `"}`,
		"process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds", "process_start_time_seconds",
		"snowclaw_connections", "snowclaw_subscriptions", "snowclaw_search_index_docs",
		"snowclaw_search_duration_seconds_sum", "snowclaw_search_duration_seconds_count", `snowclaw_search_duration_seconds_bucket{le="0.001"}`, `snowclaw_search_duration_seconds_bucket{le="+Inf"}`,
		"snowclaw_agent_queue_depth", "snowclaw_agent_queue_capacity", "snowclaw_agent_dropped_total", "snowclaw_agent_handled_total",
		"snowclaw_agent_replies_total", "snowclaw_agent_llm_errors_total", "snowclaw_agent_flushed_total",
	}
	for _, class := range []string{"memory", "appdata", "chat", "group", "dm", "deletion", "other"} {
		want = append(want, `snowclaw_events_stored_total{class="`+class+`"}`)
	}
	for _, reason := range []string{"invalid", "blocked", "restricted", "duplicate", "rate-limited", "auth-required", "pow", "error", "other"} {
		want = append(want, `snowclaw_events_rejected_total{reason="`+reason+`"}`)
	}
	for _, typ := range []string{"req", "count", "search", "api"} {
		want = append(want, `snowclaw_queries_total{type="`+typ+`"}`)
	}
	for _, s := range want {
		if _, ok := got[s]; !ok {
			t.Errorf("series %s missing", s)
		}
	}
	// go test stamps no commit into its binary: the revision is what the
	// build info says, here none
	rev := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				rev = s.Value
			}
		}
	}
	info := `snowclaw_build_info{goversion="` + runtime.Version() + `",revision="` + rev + `",version="` + testVersion + `"}`
	if v, ok := got[info]; !ok || v != 1 {
		var have []string
		for k := range got {
			if strings.HasPrefix(k, "snowclaw_build_info") {
				have = append(have, k)
			}
		}
		t.Errorf("want %s 1, have %v (value %v)", info, have, v)
	}
	if got["process_resident_memory_bytes"] <= 0 || got["go_goroutines"] <= 0 {
		t.Errorf("standard collectors read nothing: rss %v, goroutines %v", got["process_resident_memory_bytes"], got["go_goroutines"])
	}
	// the agent env stored group events and profiles before this scrape
	if got[`snowclaw_events_stored_total{class="group"}`] < 2 || got["snowclaw_agent_queue_capacity"] < 1 {
		t.Errorf("relay series did not move: %v", got)
	}

	// every series the shipped Grafana dashboard queries is served
	dash, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "deploy", "grafana", "snowclaw.json"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for k := range got {
		names[strings.SplitN(k, "{", 2)[0]] = true
	}
	queried := regexp.MustCompile(`\b(?:snowclaw|go|process)_[a-z_]+`).FindAllString(string(dash), -1)
	if len(queried) < 10 {
		t.Fatalf("the dashboard queries only %v", queried)
	}
	for _, q := range queried {
		if !names[q] {
			t.Errorf("deploy/grafana/snowclaw.json queries %s, which /metrics does not serve", q)
		}
	}

	// an open subscription is counted until it is closed
	rc := e.raw()
	rc.send("REQ", "held-open", nostr.Filter{Kinds: []int{1}})
	if _, ok := rc.waitFor("EOSE", "held-open", 5*time.Second); !ok {
		t.Fatal("no EOSE")
	}
	if d := e.scrape()["snowclaw_subscriptions"] - got["snowclaw_subscriptions"]; d != 1 {
		t.Errorf("snowclaw_subscriptions moved by %v with one REQ open, want 1", d)
	}
}

// TestMetrics_RejectedByReason: every refusal path counts once in
// snowclaw_events_rejected_total under its reason: the websocket's own
// checks, the write pipeline's hooks (limits, tombstones, older versions,
// foreign deletions, write rules, rate limits), the disk guard, and the
// HTTP API's checks of a memory to store, before the pipeline or inside it.
func TestMetrics_RejectedByReason(t *testing.T) {
	e := startEnv(t, withMetrics)
	limited := startEnv(t, withMetrics, func(o *node.Options) {
		o.EventRatePubkey = policies.Rate{PerSecond: 1e-9, Burst: 1}
	})
	alice, bob := newUser(), newUser()
	anon, ac := e.connect(nil), e.connect(&alice)
	stored := e.mustPublish(ac, mkEvent(alice, 1, nil, "deleted below, and it stays deleted"))
	bobs := e.mustPublish(e.connect(&bob), mkEvent(bob, 1, nil, "bob's own"))
	e.mustPublish(ac, mkEvent(alice, 5, nostr.Tags{{"e", stored.ID}}, ""))
	newer := mkEvent(alice, 0, nil, `{"name":"alice"}`)
	older := mkEvent(alice, 0, nil, `{"name":"alice, earlier"}`)
	older.CreatedAt = newer.CreatedAt - 60
	older.Sign(alice.sk)
	e.mustPublish(ac, newer)
	newMem := memory(alice, "metrics/versions", `{"summary":"the newer version"}`)
	oldMem := memory(alice, "metrics/versions", `{"summary":"an older version"}`)
	oldMem.CreatedAt = newMem.CreatedAt - 60
	oldMem.Sign(alice.sk)
	e.mustPublish(ac, newMem)

	tampered := mkEvent(alice, 1, nil, "signed")
	tampered.Content = "changed after signing"
	badSig := mkEvent(alice, 1, nil, "signature of another event")
	badSig.Sig = mkEvent(alice, 1, nil, "another").Sig
	future := mkEvent(alice, 1, nil, "from the future")
	future.CreatedAt = nostr.Now() + 3600
	future.Sign(alice.sk)
	protected := mkEvent(bob, 1, nostr.Tags{{"-"}}, "protected (NIP-70)")

	storeAPI := func(env *testEnv, u user, evt nostr.Event, wantPrefix string) func() {
		return func() {
			code, msg := env.v1(&u, "POST", "/api/v1/memories", snowclaw.StoreRequest{Event: &evt}, nil)
			if code < 400 || !strings.HasPrefix(msg, wantPrefix) {
				t.Fatalf("HTTP store of kind %d: %d %q, want a refusal %q", evt.Kind, code, msg, wantPrefix)
			}
		}
	}
	for _, c := range []struct {
		name, reason string
		env          *testEnv
		act          func()
	}{
		{"id not the hash", "invalid", e, func() { e.refusedWith(anon, tampered, "invalid:") }},
		{"bad signature", "invalid", e, func() { e.refusedWith(anon, badSig, "invalid:") }},
		{"unparsable event", "invalid", e, func() {
			rc := e.raw()
			id := strings.Repeat("ab", 32)
			rc.send("EVENT", map[string]any{"id": id, "kind": "one"})
			if got, ok := rc.waitFor("OK", id, 5*time.Second); !ok || !strings.Contains(string(got[3]), "invalid:") {
				t.Fatalf("unparsable event: %s", got)
			}
		}},
		{"limits: created_at ahead", "invalid", e, func() { e.refusedWith(ac, future, "invalid:") }},
		{"NIP-70 unauthenticated", "auth-required", e, func() { e.refusedWith(anon, protected, "auth-required:") }},
		{"NIP-70 by another key", "restricted", e, func() { e.refusedWith(ac, protected, "restricted:") }},
		{"write rule: config by a stranger", "restricted", e, func() {
			e.refusedWith(ac, mkEvent(alice, 30078, nostr.Tags{{"d", "snowclaw:config:global"}}, "{}"), "restricted:")
		}},
		{"tombstone", "blocked", e, func() { e.refusedWith(ac, stored, "blocked:") }},
		{"foreign deletion", "blocked", e, func() {
			e.refusedWith(ac, mkEvent(alice, 5, nostr.Tags{{"e", bobs.ID}}, ""), "blocked:")
		}},
		{"older replaceable version", "duplicate", e, func() { e.refusedWith(ac, older, "duplicate:") }},
		{"disk full", "error", e, func() {
			e.r.SetMinFreeMB(aPetabyte)
			defer e.r.SetMinFreeMB(0)
			e.refusedWith(ac, mkEvent(alice, 1, nil, "no room"), "error: disk full")
		}},
		{"HTTP store: not a memory", "invalid", e, storeAPI(e, alice, mkEvent(alice, 1, nil, "kind 1"), "invalid:")},
		{"HTTP store: signed by another key", "restricted", e, storeAPI(e, bob, memory(alice, "metrics/other", "{}"), "restricted:")},
		{"HTTP store: older version, refused in the pipeline", "duplicate", e, storeAPI(e, alice, oldMem, "duplicate:")},
		{"HTTP store: disk full", "error", e, func() {
			e.r.SetMinFreeMB(aPetabyte)
			defer e.r.SetMinFreeMB(0)
			storeAPI(e, alice, memory(alice, "metrics/full", "{}"), "error: disk full")()
		}},
		{"rate limit", "rate-limited", limited, func() {
			c := limited.connect(nil)
			limited.mustPublish(c, mkEvent(bob, 1, nil, "the burst"))
			limited.refusedWith(c, mkEvent(bob, 1, nil, "one too many"), "rate-limited:")
		}},
	} {
		series := `snowclaw_events_rejected_total{reason="` + c.reason + `"}`
		before := c.env.scrape()
		c.act()
		after := c.env.scrape()
		if d := after[series] - before[series]; d != 1 {
			t.Errorf("%s: %s moved by %v, want 1", c.name, series, d)
		}
		for k, v := range after {
			if k != series && strings.HasPrefix(k, "snowclaw_events_rejected_total") && v != before[k] {
				t.Errorf("%s: %s moved too (%v → %v)", c.name, k, before[k], v)
			}
		}
	}
}
