package node_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	memsvc "github.com/snowclaw/snowclaw/plugins/memory"
)

// originOf reads the origin of each result from the explain notices of
// layered searches (relay/conn.go sendExplain).
func originOf(notices []string) map[string]string {
	out := map[string]string{}
	for _, n := range notices {
		var body struct {
			Explain string `json:"explain"`
			Results []struct {
				ID     string  `json:"id"`
				Origin string  `json:"origin"`
				Final  float64 `json:"final"`
			} `json:"results"`
		}
		if json.Unmarshal([]byte(n), &body) == nil && body.Explain != "" {
			for _, r := range body.Results {
				out[r.ID] = r.Origin
			}
		}
	}
	return out
}

// A second snowclaw (NIP-50) and a bare khatru (no NIP-50: the t tag
// and kind fallback) as remotes: their memories are found, ranked by
// the same fusion times their trust around an equal local memory,
// deduplicated by id, address and supersedes chain, marked with their
// origin, never stored here, and cached: the second search asks neither.
func TestRemote_LayeredSearch(t *testing.T) {
	snow := startEnv(t, withSearch)
	snowRemote := serveRemote(t, snow.n.Handler())
	bare := startBareKhatru(t)
	e := startEnv(t, withSearch, withMetrics, withRemotes(10*time.Second, snowRemote.url, 0.5, bare.url, 2.0))

	const text = `{"summary":"Zeppelin hangars need helium leak checks every week"}`
	x, y, z, w, v, s := newUser(), newUser(), newUser(), newUser(), newUser(), newUser()
	local := memory(x, "zeppelin/hangar", text)
	onSnow := memory(y, "zeppelin/hangar", text) // equal, on the less trusted remote
	onBare := memory(z, "zeppelin/hangar", text) // equal, on the more trusted remote
	both := memory(w, "zeppelin/both", `{"summary":"Zeppelin crews rehearse mooring drills"}`)
	old := memory(v, "zeppelin/version", `{"summary":"Zeppelin envelope is cotton, old version"}`)
	old.CreatedAt = nostr.Now() - 100
	old.Sign(v.sk)
	newer := memory(v, "zeppelin/version", `{"summary":"Zeppelin envelope is polyester, new version"}`)
	first := memory(s, "zeppelin/chain/1", `{"summary":"Zeppelin ballast is sand"}`)
	second := memory(s, "zeppelin/chain/2", `{"summary":"Zeppelin ballast is water"}`, nostr.Tag{"snow:supersedes", first.ID})

	e.mustPublish(e.connect(nil), local)
	publishTo(t, snow.url, onSnow, both, newer)
	publishTo(t, bare.url, onBare, both, local, old, first, second)

	c := e.connect(nil)
	got, closed := fetch(t, c, nostr.Filter{Search: "zeppelin include:remote explain:true"})
	if closed != "" {
		t.Fatalf("CLOSED %s", closed)
	}
	at := map[string]int{}
	for i, evt := range got {
		if _, dup := at[evt.ID]; dup {
			t.Fatalf("%s twice: %v", evt.ID, ids(got))
		}
		at[evt.ID] = i
	}
	for name, evt := range map[string]nostr.Event{"local": local, "on the snowclaw remote": onSnow, "on the khatru remote": onBare,
		"on both remotes": both, "the newer version": newer, "the superseding memory": second} {
		if _, ok := at[evt.ID]; !ok {
			t.Fatalf("%s not found: %v", name, ids(got))
		}
	}
	for name, evt := range map[string]nostr.Event{"the older version": old, "the superseded memory": first} {
		if _, ok := at[evt.ID]; ok {
			t.Fatalf("%s returned: %v", name, ids(got))
		}
	}
	// trust 2 > local 1 > trust 0.5 for three equal memories
	if !(at[onBare.ID] < at[local.ID] && at[local.ID] < at[onSnow.ID]) {
		t.Fatalf("order khatru(2.0) %d, local %d, snowclaw(0.5) %d; want trust order", at[onBare.ID], at[local.ID], at[onSnow.ID])
	}

	origin := originOf(c.Notices())
	want := map[string]string{local.ID: "local", onSnow.ID: snowRemote.url, onBare.ID: bare.url, both.ID: bare.url, newer.ID: snowRemote.url}
	for id, o := range want {
		if origin[id] != o {
			t.Fatalf("origin of %s: %q, want %q (all: %v)", id[:8], origin[id], o, origin)
		}
	}

	// nothing remote reached the local store
	stored, _ := fetch(t, e.connect(nil), nostr.Filter{IDs: []string{onSnow.ID, onBare.ID, both.ID, newer.ID}})
	if len(stored) != 0 {
		t.Fatalf("remote results stored locally: %v", ids(stored))
	}

	// cached: the same search again asks neither remote
	hitsSnow, hitsBare := snowRemote.hits.Load(), bare.hits.Load()
	if hitsSnow == 0 || hitsBare == 0 {
		t.Fatalf("remotes not asked: %d, %d requests", hitsSnow, hitsBare)
	}
	res := e.searchAPI(&x, "zeppelin", "&remote=1")
	if snowRemote.hits.Load() != hitsSnow || bare.hits.Load() != hitsBare {
		t.Fatalf("second search asked the remotes again: %d→%d, %d→%d", hitsSnow, snowRemote.hits.Load(), hitsBare, bare.hits.Load())
	}
	// the HTTP API marks each hit
	seen := 0
	for _, h := range res.Results {
		if o, ok := want[h.Event.ID]; ok {
			seen++
			if h.Origin != o {
				t.Fatalf("API origin of %s: %q, want %q", h.Event.ID[:8], h.Origin, o)
			}
		}
	}
	if seen != len(want) {
		t.Fatalf("API search found %d of %d", seen, len(want))
	}
	// without include:remote nothing remote is asked or returned
	plain := search(t, e, nil, nostr.Filter{Search: "zeppelin"})
	if len(plain) != 1 || plain[0].ID != local.ID {
		t.Fatalf("local search: %v", ids(plain))
	}
	if snowRemote.hits.Load() != hitsSnow || bare.hits.Load() != hitsBare {
		t.Fatal("a search without include:remote asked a remote")
	}
	m := e.scrape()
	if m[`snowclaw_remote_cache_total{result="hit"}`] < 2 {
		t.Fatalf("cache hits not counted: %v", m[`snowclaw_remote_cache_total{result="hit"}`])
	}
	// the khatru remote was asked with filters (no NIP-50), never authenticated
	bare.mu.Lock()
	defer bare.mu.Unlock()
	if len(bare.authed) > 0 {
		t.Fatalf("the remote search authenticated as %v", bare.authed)
	}
	for _, f := range bare.filters {
		if f.Search != "" || !slices.Equal(f.Kinds, []int{snowclaw.KindAppData}) {
			t.Fatalf("fallback filter %v", f)
		}
	}
}

// A remote that never answers costs a search its timeout, not more: the
// answer arrives while the hanging remote is still held (a barrier the
// test's cleanup opens), with the local results, and the timeout shows
// on /metrics. A dead remote (nothing listening) shows as an error.
func TestRemote_HangingRemoteCostsItsTimeout(t *testing.T) {
	snow := startEnv(t, withSearch)
	snowRemote := serveRemote(t, snow.n.Handler())
	hanging, release := startHanging(t)
	dead := serveRemote(t, snow.n.Handler())
	deadURL := dead.url
	dead.srv.Close()
	e := startEnv(t, withSearch, withMetrics, withRemotes(300*time.Millisecond, hanging.url, 1.0, snowRemote.url, 1.0, deadURL, 1.0))

	a := newUser()
	local := memory(a, "blimp/local", `{"summary":"Blimp pilots log wind shear"}`)
	remote := memory(a, "blimp/remote", `{"summary":"Blimp mast needs grease"}`)
	e.mustPublish(e.connect(nil), local)
	publishTo(t, snow.url, remote)
	got := search(t, e, nil, nostr.Filter{Search: "blimp include:remote"})
	select {
	case <-release:
		t.Fatal("the hanging remote was released before the search returned")
	default:
	}
	if !contains(got, local.ID) {
		t.Fatalf("local result missing: %v", ids(got))
	}
	m := e.scrape()
	if m[`snowclaw_remote_requests_total{remote="`+hanging.url+`",result="timeout"}`] != 1 {
		t.Fatalf("hanging remote's timeout not counted: %v", remoteSeries(m))
	}
	if m[`snowclaw_remote_requests_total{remote="`+deadURL+`",result="error"}`] != 1 {
		t.Fatalf("dead remote's failure not counted: %v", remoteSeries(m))
	}
	// the hanging remote now rests: the next search does not wait on it
	before := hanging.hits.Load()
	search(t, e, nil, nostr.Filter{Search: "blimp mast include:remote"})
	if hanging.hits.Load() != before {
		t.Fatal("a resting remote was asked again")
	}
	if m := e.scrape(); m[`snowclaw_remote_requests_total{remote="`+hanging.url+`",result="skipped"}`] != 1 {
		t.Fatalf("skip not counted: %v", remoteSeries(m))
	}
}

func remoteSeries(m map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		if strings.HasPrefix(k, "snowclaw_remote_") && !strings.Contains(k, "_bucket") {
			out[k] = v
		}
	}
	return out
}

// The agent directory lists the agents the remotes hold (kind 0 with
// snow:model), marked with the remote they came from; a pubkey with a
// profile here keeps the local one, and a plain profile is not an agent
// wherever it is.
func TestRemote_DirectoryListsRemoteAgents(t *testing.T) {
	snow := startEnv(t, withSearch)
	snowRemote := serveRemote(t, snow.n.Handler())
	bare := startBareKhatru(t)
	e := startEnv(t, withSearch, withRemotes(10*time.Second, snowRemote.url, 0.5, bare.url, 1.0))
	far, near, both, human := newUser(), newUser(), newUser(), newUser()
	publishTo(t, snow.url, mkEvent(far, 0, nil, `{"name":"far-agent","snow:model":"meta/llama-3-8b"}`),
		mkEvent(human, 0, nil, `{"name":"a person"}`))
	publishTo(t, bare.url, mkEvent(near, 0, nostr.Tags{{"snow:model", "anthropic/claude-opus-4"}}, `{"name":"near-agent"}`),
		mkEvent(both, 0, nil, `{"name":"remote copy","snow:model":"x/remote"}`))
	e.mustPublish(e.connect(nil), mkEvent(both, 0, nil, `{"name":"local copy","snow:model":"x/local"}`))

	u := newUser()
	var d memsvc.Directory
	if code, msg := e.v1(&u, "GET", "/api/v1/agents", nil, &d); code != 200 {
		t.Fatalf("agents: %d %s", code, msg)
	}
	for pk, want := range map[string][2]string{far.pk: {"far-agent", snowRemote.url}, near.pk: {"near-agent", bare.url}, both.pk: {"local copy", ""}} {
		a, ok := findAgent(d, pk)
		if !ok || a.Name != want[0] || a.Origin != want[1] {
			t.Fatalf("agent %s: %+v (listed %v), want name %q origin %q", pk[:8], a, ok, want[0], want[1])
		}
	}
	if _, ok := findAgent(d, human.pk); ok {
		t.Fatal("a remote profile without snow:model is listed")
	}
	n := 0
	for _, a := range d.Agents {
		if a.Pubkey == both.pk {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the local agent listed %d times", n)
	}
}
