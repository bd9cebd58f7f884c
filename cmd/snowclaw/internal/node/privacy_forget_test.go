package node_test

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
	"github.com/snowclaw/snowclaw/agent"
)

// aliceMemory is one of alice's own memories (public tier, plain).
func aliceMemory(u user, topic, text string, at nostr.Timestamp, tags ...string) nostr.Event {
	ts := nostr.Tags{{"d", "snow:memory:" + topic}}
	for _, t := range tags {
		ts = append(ts, nostr.Tag{"t", t})
	}
	evt := nostr.Event{Kind: 30078, CreatedAt: at, Tags: ts, Content: `{"summary":"` + text + `"}`}
	evt.Sign(u.sk)
	return evt
}

// TestPrivacy_ForgetBySelector: each selector removes exactly what it
// names, for good: gone from REQ and search, refused when sent again.
func TestPrivacy_ForgetBySelector(t *testing.T) {
	e := startAgentEnv(t)
	now := nostr.Now()
	mem := map[string]nostr.Event{
		"food":    aliceMemory(e.alice, "alice/food/likes", "likes spicy noodles", now, "food"),
		"travel":  aliceMemory(e.alice, "alice/travel/plans", "plans a trip to Lisbon", now),
		"old":     aliceMemory(e.alice, "alice/school", "went to school in Bergen", nostr.Timestamp(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Unix())),
		"address": aliceMemory(e.alice, "alice/home", "my address is 12 Elm Street", now),
		"byid":    aliceMemory(e.alice, "alice/misc", "owns a green bicycle", now),
		"keep":    aliceMemory(e.alice, "alice/work", "works on rocket engines", now),
	}
	forgotten := map[string]nostr.Event{}
	for name, m := range mem {
		e.mustPublish(e.ac, m)
		forgotten[name] = m
	}
	bobs := e.mustPublish(e.bc, aliceMemory(e.bob, "bob/food", "likes spicy noodles too", now, "food"))

	present := func() map[string]bool {
		out := map[string]bool{}
		evs, _ := fetch(t, e.ac, nostr.Filter{Kinds: []int{30078}, Authors: []string{e.alice.pk}})
		for name, m := range mem {
			out[name] = contains(evs, m.ID)
		}
		return out
	}
	forget := func(body map[string]any, gone ...string) {
		t.Helper()
		code, res := e.api(&e.alice, "POST", "/api/v1/privacy/forget", body)
		if code != 200 {
			t.Fatalf("forget %v: %d %v", body, code, res)
		}
		got := present()
		for _, g := range gone {
			if got[g] {
				t.Fatalf("forget %v: %s still there", body, g)
			}
			delete(mem, g)
		}
		for name, ok := range got {
			if _, want := mem[name]; want && !ok {
				t.Fatalf("forget %v removed %s too", body, name)
			}
		}
	}
	forget(map[string]any{"ids": []string{mem["byid"].ID}}, "byid")
	forget(map[string]any{"topic": "alice/travel"}, "travel")
	forget(map[string]any{"tags": []string{"food"}}, "food")
	forget(map[string]any{"before": "2021-01-01"}, "old")

	// a query lists its matches first and removes nothing until confirmed
	code, res := e.api(&e.alice, "POST", "/api/v1/privacy/forget", map[string]any{"query": "address"})
	if code != 200 || res["preview"] != true || !strings.Contains(mustJSON(res["matches"]), "12 Elm Street") || strings.Contains(mustJSON(res["matches"]), "rocket") {
		t.Fatalf("query preview: %d %s", code, mustJSON(res))
	}
	if !present()["address"] {
		t.Fatal("the preview removed something")
	}
	token := res["token"].(string)
	if code, _ := e.api(&e.bob, "POST", "/api/v1/privacy/forget", map[string]any{"query": "address", "token": token}); code == 200 {
		t.Fatal("bob used alice's token")
	}
	forget(map[string]any{"query": "address", "token": token}, "address")

	if !present()["keep"] {
		t.Fatal("an unselected memory went")
	}
	evs, _ := fetch(t, e.bc, nostr.Filter{IDs: []string{bobs.ID}})
	if len(evs) != 1 {
		t.Fatal("bob's memory was touched")
	}
	// gone from search, and refused when published again
	gone := []string{}
	for _, name := range []string{"food", "travel", "old", "address", "byid"} {
		gone = append(gone, forgotten[name].ID)
	}
	for _, q := range []string{"Lisbon trip", "12 Elm Street address", "green bicycle", "spicy noodles", "school Bergen"} {
		evs, _ := fetch(t, e.ac, nostr.Filter{Search: q})
		for _, id := range gone {
			if contains(evs, id) {
				t.Fatalf("search %q still finds a forgotten memory", q)
			}
		}
	}
	e.refusedWith(e.ac, aliceMemory(e.alice, "alice/misc", "owns a green bicycle", now), "blocked:")
}

// TestPrivacy_FreezeDestroyAudit: a frozen person's new facts are not
// stored; destroy (after its token) leaves nothing about alice in the
// store, the index or the agent, also after a restart with a reindex,
// while bob's data stays; every operation is in the owner's audit list.
func TestPrivacy_FreezeDestroyAudit(t *testing.T) {
	e := startAgentEnv(t)
	aliceNpub, _ := nip19.EncodePublicKey(e.alice.pk)
	e.dm(e.alice, "freeze my memory")
	e.dm(e.alice, "Snowclaw, remember that my locker code is 4417")
	if items := e.n.Agent().Person(e.alice.pk).Items; len(items) != 0 {
		t.Fatalf("a frozen person's fact was stored: %+v", items)
	}
	e.dm(e.alice, "unfreeze my memory")
	e.dm(e.alice, "Snowclaw, remember that my locker code is 5528")
	e.dm(e.bob, "Snowclaw, remember that my dog is called Rex")
	e.say(e.ac, e.alice, "@Snowclaw remember that alice owns the launch checklist")
	e.say(e.bc, e.bob, "bob was here")
	e.settle()
	if len(e.n.Agent().Person(e.alice.pk).Items) != 2 {
		t.Fatalf("alice's items before destroy: %+v", e.n.Agent().Person(e.alice.pk).Items)
	}

	var aliceDs []string
	for _, it := range e.n.Agent().Person(e.alice.pk).Items {
		aliceDs = append(aliceDs, agent.ItemD(it))
	}
	// no destroy without the token, and not by someone else
	if code, _ := e.api(&e.bob, "POST", "/api/v1/privacy/destroy", map[string]any{"npub": aliceNpub}); code != http.StatusForbidden {
		t.Fatalf("bob destroying alice: %d", code)
	}
	code, res := e.api(&e.alice, "POST", "/api/v1/privacy/destroy", nil)
	if code != 200 || res["preview"] != true {
		t.Fatalf("destroy preview: %d %v", code, res)
	}
	if len(e.n.Agent().Person(e.alice.pk).Items) == 0 {
		t.Fatal("destroy acted without its token")
	}
	if code, _ := e.api(&e.alice, "POST", "/api/v1/privacy/destroy", map[string]any{"token": "0123456789abcdef"}); code == 200 {
		t.Fatal("a wrong token was accepted")
	}
	code, res = e.api(&e.alice, "POST", "/api/v1/privacy/destroy", map[string]any{"token": res["token"]})
	if code != 200 || res["preview"] == true {
		t.Fatalf("destroy: %d %v", code, res)
	}

	check := func(when string) {
		t.Helper()
		ag := e.connect(&e.agent) // the agent reads everything
		for _, f := range []nostr.Filter{
			{Authors: []string{e.alice.pk}, Kinds: []int{0, 1, 9, 30078}},
			{Kinds: []int{9, 1059, 30078}, Tags: nostr.TagMap{"p": {e.alice.pk}}},
			{Search: "locker code"},
			{Search: "launch checklist"},
			{Kinds: []int{30078}, Tags: nostr.TagMap{"d": aliceDs}},
		} {
			evs, _ := fetch(t, ag, f)
			for _, ev := range evs {
				if ev.PubKey == e.alice.pk || hasTag(ev, "p", e.alice.pk) || slices.Contains(aliceDs, ev.Tags.GetD()) {
					t.Fatalf("%s: an event about alice for %v: %s", when, f, mustJSON(ev))
				}
			}
		}
		if p := e.n.Agent().Person(e.alice.pk); p.Npub != nil || len(p.Items) != 0 || len(p.Messages) != 0 {
			t.Fatalf("%s: the agent still holds %+v", when, p)
		}
		if items := e.n.Agent().Person(e.bob.pk).Items; len(items) != 1 {
			t.Fatalf("%s: bob's items = %+v", when, items)
		}
		bobD := agent.ItemD(e.n.Agent().Person(e.bob.pk).Items[0])
		evs, _ := fetch(t, ag, nostr.Filter{Search: "dog Rex"})
		if !slices.ContainsFunc(evs, func(ev *nostr.Event) bool { return ev.Tags.GetD() == bobD }) {
			t.Fatalf("%s: bob's memory not found: %s", when, mustJSON(evs))
		}
	}
	check("after destroy")
	e.opts.Search.ForceRebuild = true
	e.restart()
	check("after restart and reindex")

	code, res = e.api(&e.owner, "GET", "/api/v1/privacy/audit", nil)
	all := mustJSON(res)
	for _, op := range []string{`"freeze"`, `"unfreeze"`, `"destroy-preview"`, `"destroy"`} {
		if code != 200 || !strings.Contains(all, op) {
			t.Fatalf("audit lacks %s: %d %s", op, code, all)
		}
	}
	// the code as a word of its own: ids and timestamps in the audit are
	// long hex and digit runs that may hold "5528" by chance
	if strings.Contains(all, "locker") || regexp.MustCompile(`\b5528\b`).MatchString(all) {
		t.Fatal("the audit holds deleted content")
	}
	if code, _ := e.api(&e.bob, "GET", "/api/v1/privacy/audit?npub="+aliceNpub, nil); code != http.StatusForbidden {
		t.Fatalf("bob reading alice's audit: %d", code)
	}
}
