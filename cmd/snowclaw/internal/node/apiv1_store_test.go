package node_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
	"github.com/snowclaw/snowclaw"
)

func TestAPIv1_Store(t *testing.T) {
	e := startAgentEnv(t)
	carol := newUser()
	for _, c := range []struct {
		name   string
		who    *user
		req    snowclaw.StoreRequest
		status int
		tier   snowclaw.Tier
	}{
		{"private default", &e.alice, snowclaw.StoreRequest{Text: "I prefer window seats"}, 201, snowclaw.TierPrivate},
		{"group as member", &e.alice, snowclaw.StoreRequest{Text: "we meet on Tuesdays", Tier: snowclaw.TierGroup, Group: agentGroup}, 201, snowclaw.TierGroup},
		{"group as non-member", &carol, snowclaw.StoreRequest{Text: "we meet on Fridays", Tier: snowclaw.TierGroup, Group: agentGroup}, 403, ""},
		{"group without group", &e.alice, snowclaw.StoreRequest{Text: "no group named", Tier: snowclaw.TierGroup}, 400, ""},
		{"public by non-owner", &e.alice, snowclaw.StoreRequest{Text: "the sky is green", Tier: snowclaw.TierPublic}, 403, ""},
		{"internal by non-owner", &e.alice, snowclaw.StoreRequest{Text: "agent secret", Tier: snowclaw.TierInternal}, 403, ""},
		{"public by owner", &e.owner, snowclaw.StoreRequest{Text: "the relay runs on Tuesdays", Tier: snowclaw.TierPublic, Topic: "fact/relay"}, 201, snowclaw.TierPublic},
		{"tags on text", &e.alice, snowclaw.StoreRequest{Text: "tagged", Tags: []string{"x"}}, 400, ""},
		{"empty", &e.alice, snowclaw.StoreRequest{}, 400, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			mv, code, msg := e.storeText(c.who, c.req)
			if code != c.status {
				t.Fatalf("status %d %q, want %d", code, msg, c.status)
			}
			if code != 201 {
				return
			}
			if mv.Tier != c.tier || mv.Text != c.req.Text || mv.Pubkey != e.agent.pk || mv.Group != c.req.Group {
				t.Fatalf("view: %s", mustJSON(mv))
			}
			// on the relay when the answer comes
			evs := mustFetch(t, e.connect(c.who), nostr.Filter{IDs: []string{mv.ID}})
			if len(evs) != 1 || evs[0].PubKey != e.agent.pk {
				t.Fatalf("event %s not stored: %v", mv.ID, ids(evs))
			}
		})
	}
	if l := e.list(&carol, "?tier=public"); !slices.ContainsFunc(l, func(m snowclaw.MemoryView) bool { return m.Text == "the relay runs on Tuesdays" }) {
		t.Fatalf("owner's public memory not listed for others: %s", mustJSON(l))
	}

	signed := memory(e.alice, "project/alice/notes", `{"summary":"signed by alice"}`, nostr.Tag{"t", "project"})
	var out struct {
		Memory snowclaw.MemoryView `json:"memory"`
	}
	if code, msg := e.v1(&e.alice, "POST", "/api/v1/memories", snowclaw.StoreRequest{Event: &signed}, &out); code != 201 {
		t.Fatalf("signed event: %d %s", code, msg)
	}
	if out.Memory.ID != signed.ID || out.Memory.Text != "signed by alice" || out.Memory.Pubkey != e.alice.pk || !slices.Equal(out.Memory.Tags, []string{"project"}) {
		t.Fatalf("signed event view: %s", mustJSON(out.Memory))
	}
	if evs := mustFetch(t, e.bc, nostr.Filter{IDs: []string{signed.ID}}); len(evs) != 1 {
		t.Fatal("signed event not on the relay")
	}
	other := memory(e.alice, "project/alice/other", "by alice")
	if code, msg := e.v1(&e.bob, "POST", "/api/v1/memories", snowclaw.StoreRequest{Event: &other}, nil); code != 403 || !strings.HasPrefix(msg, "restricted:") {
		t.Fatalf("bob posting alice's event: %d %q", code, msg)
	}
	note := mkEvent(e.alice, 1, nil, "not a memory")
	if code, _ := e.v1(&e.alice, "POST", "/api/v1/memories", snowclaw.StoreRequest{Event: &note}, nil); code != 400 {
		t.Fatalf("kind 1: %d", code)
	}
	outsider := memory(carol, "group/agentroom/x", "sneaking in", nostr.Tag{"h", agentGroup})
	if code, msg := e.v1(&carol, "POST", "/api/v1/memories", snowclaw.StoreRequest{Event: &outsider}, nil); code != 403 || !strings.HasPrefix(msg, "restricted:") {
		t.Fatalf("non-member's group event: %d %q", code, msg)
	}
	tampered := memory(e.alice, "project/alice/t", "original")
	tampered.Content = "changed"
	if code, _ := e.v1(&e.alice, "POST", "/api/v1/memories", snowclaw.StoreRequest{Event: &tampered}, nil); code != 400 {
		t.Fatalf("tampered event: %d", code)
	}
}

func TestAPIv1_Forget(t *testing.T) {
	e := startAgentEnv(t)
	priv, code, msg := e.storeText(&e.alice, snowclaw.StoreRequest{Text: "my passport expires in May"})
	if code != 201 {
		t.Fatalf("store private: %d %s", code, msg)
	}
	grp, code, msg := e.storeText(&e.alice, snowclaw.StoreRequest{Text: "the rover is named Dusty", Tier: snowclaw.TierGroup, Group: agentGroup})
	if code != 201 {
		t.Fatalf("store group: %d %s", code, msg)
	}
	bobs := e.mustPublish(e.bc, memory(e.bob, "fact/bob", `{"summary":"bob owns a kayak"}`))

	if code, msg := e.v1(&e.bob, "DELETE", "/api/v1/memories/"+priv.ID, nil, nil); code != http.StatusNotFound {
		t.Fatalf("bob forgets alice's private memory: %d %q", code, msg)
	}
	if code, msg := e.v1(&e.bob, "DELETE", "/api/v1/memories/"+grp.ID, nil, nil); code != http.StatusForbidden || !strings.HasPrefix(msg, "restricted:") {
		t.Fatalf("bob forgets alice's group memory: %d %q", code, msg)
	}
	if hit, ok := hitFor(e.searchAPI(&e.bob, "rover named Dusty", ""), grp.ID); !ok || hit.Memory.Text != "the rover is named Dusty" {
		t.Fatal("group memory not found before the forget")
	}

	var res snowclaw.ForgetResponse
	if code, msg := e.v1(&e.alice, "DELETE", "/api/v1/memories/"+grp.ID, nil, &res); code != 200 || res.Deleted != 1 {
		t.Fatalf("alice forgets her group memory: %d %q %+v", code, msg, res)
	}
	if slices.Contains(viewIDs(e.list(&e.bob, "")), grp.ID) {
		t.Fatal("forgotten memory still listed")
	}
	if _, ok := hitFor(e.searchAPI(&e.bob, "rover named Dusty", ""), grp.ID); ok {
		t.Fatal("forgotten memory still found by search")
	}
	if code, _ := e.v1(&e.alice, "GET", "/api/v1/memories/"+grp.ID, nil, nil); code != http.StatusNotFound {
		t.Fatalf("forgotten memory: %d", code)
	}
	for _, it := range e.n.Agent().Items() {
		if strings.Contains(it.Text, "Dusty") {
			t.Fatal("forgotten memory still in the agent's RAM")
		}
	}
	// the erased event stays erased, but asked again the memory is a new
	// version (even within the second of the erasure)
	again, code, msg := e.storeText(&e.alice, snowclaw.StoreRequest{Text: "the rover is named Dusty", Tier: snowclaw.TierGroup, Group: agentGroup})
	if code != 201 || again.ID == grp.ID || again.Text != "the rover is named Dusty" {
		t.Fatalf("storing the memory again: %d %q %s", code, msg, mustJSON(again))
	}
	if len(mustFetch(t, e.bc, nostr.Filter{IDs: []string{grp.ID}})) != 0 {
		t.Fatal("the erased event is back")
	}

	if code, msg := e.v1(&e.alice, "DELETE", "/api/v1/memories/"+priv.ID, nil, &res); code != 200 || res.Deleted != 1 {
		t.Fatalf("alice forgets her private memory: %d %q", code, msg)
	}
	if code, msg := e.v1(&e.owner, "DELETE", "/api/v1/memories/"+bobs.ID, nil, &res); code != 200 || res.Deleted != 1 {
		t.Fatalf("owner forgets bob's memory: %d %q", code, msg)
	}
	if evs := mustFetch(t, e.bc, nostr.Filter{IDs: []string{priv.ID, bobs.ID}}); len(evs) != 0 {
		t.Fatalf("forgotten events still served: %v", ids(evs))
	}
	_, audit := e.api(&e.alice, "GET", "/api/v1/privacy/audit", nil)
	if a := mustJSON(audit); strings.Count(a, `"op":"forget"`) != 2 || !strings.Contains(a, grp.ID) || !strings.Contains(a, priv.ID) {
		t.Fatalf("alice's audit: %s", a)
	}
}

func TestAPIv1_Export(t *testing.T) {
	e := startAgentEnv(t)
	if _, code, msg := e.storeText(&e.alice, snowclaw.StoreRequest{Text: "my cat is called Pixel"}); code != 201 {
		t.Fatalf("store: %d %s", code, msg)
	}
	var x map[string]any
	if code, msg := e.v1(&e.alice, "GET", "/api/v1/export?format=json", nil, &x); code != 200 || x["export_version"] != "1.0" || !strings.Contains(mustJSON(x), "Pixel") {
		t.Fatalf("json export: %d %q %s", code, msg, mustJSON(x))
	}
	aliceNpub, _ := nip19.EncodePublicKey(e.alice.pk)
	if x["user_id"] != aliceNpub {
		t.Fatalf("export of %v", x["user_id"])
	}
	code, md := e.api(&e.alice, "GET", "/api/v1/export?format=markdown", nil)
	if raw, _ := md["raw"].(string); code != 200 || !strings.HasPrefix(raw, "#") || !strings.Contains(raw, "Pixel") {
		t.Fatalf("markdown export: %d %q", code, md["raw"])
	}
	if code, _ := e.v1(&e.bob, "GET", "/api/v1/export?npub="+aliceNpub, nil, nil); code != http.StatusForbidden {
		t.Fatalf("bob exporting alice: %d", code)
	}
	if code, _ := e.v1(&e.owner, "GET", "/api/v1/export?npub="+aliceNpub, nil, &x); code != 200 || !strings.Contains(mustJSON(x), "Pixel") {
		t.Fatalf("owner exporting alice: %d", code)
	}
	if code, _ := e.v1(&e.alice, "GET", "/api/v1/export?format=xml", nil, nil); code != 400 {
		t.Fatalf("format=xml: %d", code)
	}
}
