package node_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
)

func withSearch(o *node.Options) {
	o.Search.Enabled = true
	o.Search.DefaultLimit = 20
	o.Search.MaxLimit = 100
}

// memory builds a snow:memory item by u.
func memory(u user, topic, content string, extra ...nostr.Tag) nostr.Event {
	tags := nostr.Tags{{"d", "snow:memory:" + topic}}
	tags = append(tags, extra...)
	return mkEvent(u, 30078, tags, content)
}

func search(t *testing.T, e *testEnv, reader *user, f nostr.Filter) []*nostr.Event {
	t.Helper()
	got, closed := fetch(t, e.connect(reader), f)
	if closed != "" {
		t.Fatalf("search %q: CLOSED %s", f.Search, closed)
	}
	return got
}

func TestSearch_RelevanceOrderAndLimit(t *testing.T) {
	e := startEnv(t, withSearch)
	a := newUser()
	c := e.connect(nil)
	best := e.mustPublish(c, memory(a, "go/concurrency", `{"summary":"Goroutines and channels are the Go concurrency model","detail":"use goroutines for concurrency, channels to talk"}`))
	e.mustPublish(c, memory(a, "go/modules", `{"summary":"Go modules pin dependency versions"}`))
	e.mustPublish(c, memory(a, "cooking/pasta", `{"summary":"Boil pasta in salted water for nine minutes"}`))
	chans := e.mustPublish(c, memory(a, "go/channels", `{"summary":"Closing a channel wakes every receiver"}`))
	got := search(t, e, nil, nostr.Filter{Search: "goroutines channels concurrency"})
	if len(got) < 2 || got[0].ID != best.ID || got[1].ID != chans.ID {
		t.Fatalf("ranking %v, want the concurrency memory, then the channel one", ids(got))
	}
	// vectors may bring in loosely related memories, but never above
	// what matches the words
	for i, g := range got {
		if g.Tags.GetD() == "snow:memory:cooking/pasta" && i < 2 {
			t.Fatalf("unrelated memory ranked %d: %v", i+1, ids(got))
		}
	}
	if got := search(t, e, nil, nostr.Filter{Search: "go", Limit: 1}); len(got) != 1 {
		t.Fatalf("limit 1 gave %d results", len(got))
	}
	// answered by the index alone: no event twice, none the store would
	// add unranked (the pasta memory matches kinds but not the words)
	got = search(t, e, nil, nostr.Filter{Search: "channel receiver", Kinds: []int{30078}, Limit: 50})
	seen := map[string]bool{}
	for _, g := range got {
		if seen[g.ID] {
			t.Fatalf("%s returned twice", g.ID)
		}
		seen[g.ID] = true
	}
	if len(got) == 0 || got[0].ID != chans.ID {
		t.Fatalf("search with kinds: %v", ids(got))
	}
}

func TestSearch_SearchableRightAfterOK(t *testing.T) {
	e := startEnv(t, withSearch)
	a := newUser()
	c := e.connect(nil)
	for i := 0; i < 5; i++ {
		evt := e.mustPublish(c, memory(a, "fact/"+strconv.Itoa(i), "zebra fact number "+strconv.Itoa(i)+" quasar"+strconv.Itoa(i)))
		got := search(t, e, nil, nostr.Filter{Search: "quasar" + strconv.Itoa(i)})
		if len(got) == 0 || got[0].ID != evt.ID {
			t.Fatalf("memory %d not searchable right after its OK: %v", i, ids(got))
		}
	}
}

func TestSearch_FiltersAndExtensions(t *testing.T) {
	e := startEnv(t, withSearch)
	a, b := newUser(), newUser()
	c := e.connect(nil)
	old := memory(a, "db/postgres", `{"summary":"postgres vacuum tuning notes"}`, nostr.Tag{"t", "postgres"}, nostr.Tag{"snow:model", "anthropic/claude-opus-4-6"}, nostr.Tag{"snow:confidence", "0.9"})
	old.CreatedAt = nostr.Timestamp(time.Date(2024, 1, 10, 0, 0, 0, 0, time.UTC).Unix())
	old.Sign(a.sk)
	e.mustPublish(c, old)
	recent := e.mustPublish(c, memory(b, "db/postgres-index", `{"summary":"postgres index bloat notes"}`, nostr.Tag{"t", "index"}, nostr.Tag{"snow:model", "openai/gpt-3.5"}, nostr.Tag{"snow:confidence", "0.3"}))
	note := e.mustPublish(c, mkEvent(a, 1, nil, "postgres notes in a kind 1 note that is long enough to be indexed"))

	cases := []struct {
		name string
		f    nostr.Filter
		want []string
	}{
		{"kinds", nostr.Filter{Search: "postgres notes", Kinds: []int{1}}, []string{note.ID}},
		{"authors", nostr.Filter{Search: "postgres notes", Authors: []string{b.pk}}, []string{recent.ID}},
		{"#t", nostr.Filter{Search: "postgres", Tags: nostr.TagMap{"t": {"postgres"}}}, []string{old.ID}},
		{"#d", nostr.Filter{Search: "postgres", Tags: nostr.TagMap{"d": {"snow:memory:db/postgres-index"}}}, []string{recent.ID}},
		{"since", nostr.Filter{Search: "postgres", Kinds: []int{30078}, Since: ptr(nostr.Now() - 3600)}, []string{recent.ID}},
		{"until", nostr.Filter{Search: "postgres", Until: ptr(nostr.Timestamp(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Unix()))}, []string{old.ID}},
		{"ids", nostr.Filter{Search: "postgres", IDs: []string{note.ID}}, []string{note.ID}},
		{"ext_t", nostr.Filter{Search: "postgres t:index"}, []string{recent.ID}},
		{"ext_topic", nostr.Filter{Search: "postgres topic:index"}, []string{recent.ID}},
		{"ext_model", nostr.Filter{Search: "postgres model:anthropic/*"}, []string{old.ID}},
		{"ext_source", nostr.Filter{Search: "postgres source:" + b.pk}, []string{recent.ID}},
		{"ext_min_confidence", nostr.Filter{Search: "postgres min_confidence:0.5"}, []string{old.ID}},
		{"ext_until", nostr.Filter{Search: "postgres until:2025-01-01"}, []string{old.ID}},
		{"ext_since", nostr.Filter{Search: "postgres since:2025-01-01 tier:public", Kinds: []int{30078}}, []string{recent.ID}},
		{"ext_unknown_ignored", nostr.Filter{Search: "vacuum color:blue", Kinds: []int{30078}, Authors: []string{a.pk}}, []string{old.ID}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := search(t, e, nil, tc.f)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", ids(got), tc.want)
			}
			for i := range got {
				if got[i].ID != tc.want[i] {
					t.Fatalf("got %v, want %v", ids(got), tc.want)
				}
			}
		})
	}
}

func ptr(ts nostr.Timestamp) *nostr.Timestamp { return &ts }

func TestSearch_SupersededHidden(t *testing.T) {
	e := startEnv(t, withSearch)
	a := newUser()
	c := e.connect(nil)
	v1 := e.mustPublish(c, memory(a, "deploy/v1", "deploys happen on tuesday"))
	v2 := e.mustPublish(c, memory(a, "deploy/v2", "deploys happen on friday", nostr.Tag{"snow:supersedes", v1.ID}))
	got := search(t, e, nil, nostr.Filter{Search: "deploys happen"})
	if len(got) != 1 || got[0].ID != v2.ID {
		t.Fatalf("got %v, want only the superseding version", ids(got))
	}
	got = search(t, e, nil, nostr.Filter{Search: "deploys happen include:superseded"})
	if len(got) != 2 {
		t.Fatalf("include:superseded gave %v", ids(got))
	}
}

func TestSearch_TrustOrdering(t *testing.T) {
	trusted, stranger := newUser(), newUser()
	e := startEnv(t, withSearch, func(o *node.Options) {
		o.Search.Search.Sources = map[string]float64{trusted.pk: 3, stranger.pk: 0.3}
	})
	c := e.connect(nil)
	strong := e.mustPublish(c, memory(stranger, "rust/errors", "rust error handling with anyhow: rust error handling rust errors"))
	weak := e.mustPublish(c, memory(trusted, "rust/result", "use Result for rust error handling"))
	got := search(t, e, nil, nostr.Filter{Search: "rust error handling"})
	if len(got) != 2 || got[0].ID != weak.ID || got[1].ID != strong.ID {
		t.Fatalf("order %v, want the trusted source's weaker match first", ids(got))
	}
}

func TestSearch_Visibility(t *testing.T) {
	w := buildWorldWith(t, withSearch)
	c := w.connect(&w.agent)
	person := w.person
	key, _ := nip44.GenerateConversationKey(person.pk, w.agent.sk)
	secret, _ := nip44.Encrypt("canary: my locker code is 4711", key)
	priv := w.mustPublish(c, mkEvent(w.agent, 30078, nostr.Tags{{"d", "snow:memory:user/locker"}, {"p", person.pk}, {"encrypted", "nip44"}}, secret))
	for _, tc := range []struct {
		reader *user
		query  string
		want   string
	}{
		{nil, "secret plans", ""},
		{&w.nonMember, "secret plans", ""},
		{&w.member, "secret plans", w.events["chat-private-group"].ID},
		{&w.nonMember, "ship friday", ""},
		{&w.member, "ship friday", w.events["memory-group"].ID},
		{&w.nonMember, "locker code", ""},
		{&w.member, "locker code", ""},
		{&w.person, "locker code", priv.ID},
		{&w.agent, "locker code", priv.ID},
	} {
		got := search(t, w.testEnv, tc.reader, nostr.Filter{Search: tc.query})
		found := ""
		for _, g := range got {
			if g.ID == tc.want || tc.want == "" {
				found = g.ID
			}
		}
		if found != tc.want {
			who := "anon"
			if tc.reader != nil {
				who = tc.reader.pk[:8]
			}
			t.Errorf("%s searching %q: got %v, want %q only", who, tc.query, ids(got), tc.want)
		}
	}
	// the canary is in RAM only, never in the index on disk
	filepath.Walk(filepath.Join(w.dir, "search"), func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if b, _ := os.ReadFile(path); bytes.Contains(b, []byte("locker code is 4711")) {
				t.Errorf("decrypted private memory found on disk in %s", path)
			}
		}
		return nil
	})
}

func TestSearch_DeleteAndReplaceLeaveIndex(t *testing.T) {
	e := startEnv(t, withSearch)
	a := newUser()
	c := e.connect(nil)
	gone := e.mustPublish(c, memory(a, "tmp/x", "ephemeral walrus memory"))
	e.mustPublish(c, mkEvent(a, 5, nostr.Tags{{"e", gone.ID}}, ""))
	if got := search(t, e, nil, nostr.Filter{Search: "walrus"}); len(got) != 0 {
		t.Fatalf("deleted memory still found: %v", ids(got))
	}
	v1 := memory(a, "pref/editor", "prefers the vim editor")
	v1.CreatedAt -= 10
	v1.Sign(a.sk)
	e.mustPublish(c, v1)
	v2 := e.mustPublish(c, memory(a, "pref/editor", "prefers the helix editor"))
	got := search(t, e, nil, nostr.Filter{Search: "prefers editor"})
	if len(got) != 1 || got[0].ID != v2.ID {
		t.Fatalf("after replacement %v, want only the new version", ids(got))
	}
	if got := search(t, e, nil, nostr.Filter{Search: "vim"}); len(got) != 0 {
		t.Fatalf("replaced version still found: %v", ids(got))
	}
}

func TestSearch_RebuildAfterLossOrCorruption(t *testing.T) {
	e := startEnv(t, withSearch)
	a := newUser()
	c := e.connect(nil)
	m := e.mustPublish(c, memory(a, "fact/otter", "sea otters hold hands while sleeping"))
	for name, damage := range map[string]func(dir string){
		"deleted":   func(dir string) { os.RemoveAll(dir) },
		"corrupted": func(dir string) { corruptFiles(t, dir) },
	} {
		t.Run(name, func(t *testing.T) {
			e.stop()
			damage(filepath.Join(e.dir, "search"))
			e.start()
			got := search(t, e, nil, nostr.Filter{Search: "otters sleeping"})
			if len(got) != 1 || got[0].ID != m.ID {
				t.Fatalf("after the index was %s: %v", name, ids(got))
			}
		})
	}
}

func corruptFiles(t *testing.T, dir string) {
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && info.Size() > 0 {
			os.WriteFile(path, []byte("garbage, not an index"), 0o600)
		}
		return nil
	})
}

func TestSearch_LiveSubscription(t *testing.T) {
	e := startEnv(t, withSearch)
	a := newUser()
	rc := e.raw()
	rc.send("REQ", "s", nostr.Filter{Search: "kubernetes"})
	if _, ok := rc.waitFor("EOSE", "s", 3*time.Second); !ok {
		t.Fatal("no EOSE")
	}
	c := e.connect(nil)
	match := e.mustPublish(c, memory(a, "ops/k8s", "kubernetes pods restart on OOM"))
	other := e.mustPublish(c, memory(a, "ops/dns", "dns caches expire after the ttl"))
	sentinel := e.mustPublish(c, memory(a, "ops/k8s-2", "kubernetes sentinel"))
	waitEvent(t, rc.Client, "s", sentinel.ID)
	got := rc.eventIDs("s")
	if !got[match.ID] || got[other.ID] {
		t.Fatalf("live search got %v: want the kubernetes memories only", got)
	}
}

// TestSearch_Explain: explain:true adds one NOTICE with each returned
// result's score breakdown, and never mentions a result the reader did
// not get.
func TestSearch_Explain(t *testing.T) {
	w := buildWorldWith(t, withSearch)
	c := w.connect(&w.member)
	pub := w.mustPublish(c, memory(w.member, "plans/public", "public plans for the launch party"))
	for _, reader := range []*user{&w.member, &w.nonMember} {
		rc := w.raw()
		rc.auth(w.url, *reader)
		rc.send("REQ", "x", nostr.Filter{Search: "plans explain:true"})
		if _, ok := rc.waitFor("EOSE", "x", 3*time.Second); !ok {
			t.Fatal("no EOSE")
		}
		got := rc.eventIDs("x")
		var body struct {
			Explain string `json:"explain"`
			Results []struct {
				ID         string  `json:"id"`
				BM25Rank   int     `json:"bm25_rank"`
				VectorRank int     `json:"vector_rank"`
				Fused      float64 `json:"fused"`
				Trust      float64 `json:"trust"`
				Final      float64 `json:"final"`
			} `json:"results"`
		}
		for _, n := range rc.Notices() {
			json.Unmarshal([]byte(n), &body)
		}
		if body.Explain != "x" || len(body.Results) != len(got) {
			t.Fatalf("explain %+v for %d results", body, len(got))
		}
		for _, r := range body.Results {
			if !got[r.ID] {
				t.Fatalf("explain mentions %s, which the reader did not get", r.ID)
			}
			if r.Final <= 0 || r.Trust <= 0 || (r.BM25Rank == 0 && r.VectorRank == 0) {
				t.Fatalf("empty breakdown %+v", r)
			}
		}
		if !got[pub.ID] {
			t.Fatal("public memory not found")
		}
		if reader == &w.member && !got[w.events["chat-private-group"].ID] {
			t.Fatal("member did not find the private group's plans")
		}
		if reader == &w.nonMember && got[w.events["chat-private-group"].ID] {
			t.Fatal("non-member found the private group's plans")
		}
	}
}

// TestSearch_ConflictsReported: two sources filing different content under
// one topic are flagged in the explain output, for readers who see both.
func TestSearch_ConflictsReported(t *testing.T) {
	e := startEnv(t, withSearch)
	a, b := newUser(), newUser()
	c := e.connect(nil)
	x := e.mustPublish(c, memory(a, "ops/deploy-day", "deploy day is tuesday"))
	y := e.mustPublish(c, memory(b, "ops/deploy-day", "deploy day is friday"))
	same := e.mustPublish(c, memory(a, "ops/oncall", "oncall rotates weekly"))
	rc := e.raw()
	rc.send("REQ", "x", nostr.Filter{Search: "deploy day oncall explain:true"})
	rc.waitFor("EOSE", "x", 3*time.Second)
	var body struct {
		Results []struct {
			ID            string   `json:"id"`
			ConflictsWith []string `json:"conflicts_with"`
		} `json:"results"`
	}
	for _, n := range rc.Notices() {
		json.Unmarshal([]byte(n), &body)
	}
	flags := map[string][]string{}
	for _, r := range body.Results {
		flags[r.ID] = r.ConflictsWith
	}
	if len(flags[x.ID]) != 1 || flags[x.ID][0] != y.ID || len(flags[y.ID]) != 1 || flags[y.ID][0] != x.ID {
		t.Fatalf("conflict flags %v: want %s and %s flagged against each other", flags, x.ID[:8], y.ID[:8])
	}
	if len(flags[same.ID]) != 0 {
		t.Fatalf("a topic with one source was flagged: %v", flags[same.ID])
	}
}
