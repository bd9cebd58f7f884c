package node_test

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"
)

// privateMemories are the agent's current private memories about u, as
// u decrypts them with their own key: event id → plain content.
func (e *agentEnv) privateMemories(u user) map[string]string {
	e.t.Helper()
	out := map[string]string{}
	c := e.connect(&u)
	ck, _ := nip44.GenerateConversationKey(e.agent.pk, u.sk)
	for _, ev := range mustFetch(e.t, c, nostr.Filter{Kinds: []int{30078}, Authors: []string{e.agent.pk}, Tags: nostr.TagMap{"p": {u.pk}}}) {
		if !strings.HasPrefix(ev.Tags.GetD(), "snow:memory:") {
			continue
		}
		if plain, err := nip44.Decrypt(ev.Content, ck); err == nil {
			out[ev.ID] = plain
		}
	}
	return out
}

func idWith(t *testing.T, m map[string]string, text string) string {
	t.Helper()
	for id, plain := range m {
		if strings.Contains(plain, text) {
			return id
		}
	}
	t.Fatalf("no memory says %q in %v", text, m)
	return ""
}

// TestPrivacy_RectifySupersedes: a person corrects a fact; the new
// version supersedes the old, which stays only as history: search, the
// agent's RAM and its state after a restart hold the corrected fact.
func TestPrivacy_RectifySupersedes(t *testing.T) {
	e := startAgentEnv(t)
	e.dm(e.alice, "remember that my address is 12 Oak Street")
	oldID := idWith(t, e.privateMemories(e.alice), "12 Oak Street")

	ans := e.dm(e.alice, "correct Oak Street: my address is 7 Elm Road")
	if !strings.HasPrefix(ans, "corrected") {
		t.Fatalf("rectify answer: %s", ans)
	}
	mems := e.privateMemories(e.alice)
	newID := idWith(t, mems, "7 Elm Road")
	if _, kept := mems[oldID]; !kept {
		t.Fatal("the old version is gone; it should stay as history")
	}
	evs := mustFetch(t, e.ac, nostr.Filter{IDs: []string{newID}})
	if len(evs) != 1 || !hasTag(evs[0], "snow:supersedes", oldID) || !hasTag(evs[0], "snow:version", "2") || !hasTag(evs[0], "p", e.alice.pk) {
		t.Fatalf("new version lacks its markers: %s", mustJSON(evs))
	}
	// search shows the correction, not the superseded fact
	found := mustFetch(t, e.ac, nostr.Filter{Search: "my address", Kinds: []int{30078}})
	if !contains(found, newID) || contains(found, oldID) {
		t.Fatalf("search for the address: want %s without %s, got %v", newID[:8], oldID[:8], ids(found))
	}
	held := func() string {
		var b strings.Builder
		for _, it := range e.n.Agent().Person(e.alice.pk).Items {
			b.WriteString(it.Text + "\n")
		}
		return b.String()
	}
	if h := held(); !strings.Contains(h, "7 Elm Road") || strings.Contains(h, "Oak Street") {
		t.Fatalf("agent RAM after rectify:\n%s", h)
	}
	// bob cannot correct alice's memories
	if code, res := e.api(&e.bob, "POST", "/api/v1/privacy/rectify", map[string]any{"npub": e.alice.pk, "id": newID, "text": "lives nowhere"}); code != 403 {
		t.Fatalf("bob rectifies alice: %d %v", code, res)
	}
	// a second correction over HTTP by id, then a restart
	code, res := e.api(&e.alice, "POST", "/api/v1/privacy/rectify", map[string]any{"id": newID[:10], "text": "my address is 9 Birch Lane"})
	if code != 200 || res["version"] != float64(3) || res["old"] != newID {
		t.Fatalf("rectify over HTTP: %d %v", code, res)
	}
	e.restart()
	if h := held(); !strings.Contains(h, "9 Birch Lane") || strings.Contains(h, "Elm Road") || strings.Contains(h, "Oak Street") {
		t.Fatalf("agent RAM after restart:\n%s", h)
	}
	// asking to correct an old version is refused with a reason
	e.ac = e.connect(&e.alice)
	if code, res := e.api(&e.alice, "POST", "/api/v1/privacy/rectify", map[string]any{"id": oldID, "text": "x"}); code != 404 {
		t.Fatalf("rectify of a superseded version: %d %v", code, res)
	}
	code, audit := e.api(&e.alice, "GET", "/api/v1/privacy/audit", nil)
	if raw := mustJSON(audit); code != 200 || strings.Count(raw, `"rectify"`) != 2 || !strings.Contains(raw, oldID) || strings.Contains(raw, "Birch") {
		t.Fatalf("audit: %d %s", code, raw)
	}
}

// TestPrivacy_PromoteOnlyUpAndOnCommand: private → group → public, each a
// new superseding event; members read the group version, outsiders only
// the public one; nobody else may promote a person's memory, and a person
// may share only into their own groups.
func TestPrivacy_PromoteOnlyUpAndOnCommand(t *testing.T) {
	e := startAgentEnv(t)
	carol := newUser()
	cc := e.connect(&carol)
	oc := e.connect(&e.owner)
	e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", "sideroom"}}, "")) // alice is not a member

	e.dm(e.alice, "remember that my favourite launch window is dawn")
	privID := idWith(t, e.privateMemories(e.alice), "launch window is dawn")

	if ans := e.dm(e.alice, "share launch window with group sideroom"); !strings.HasPrefix(ans, "restricted:") {
		t.Fatalf("alice shares into a group she is not in: %s", ans)
	}
	if code, res := e.api(&e.bob, "POST", "/api/v1/privacy/promote", map[string]any{"npub": e.alice.pk, "id": privID, "tier": "public"}); code != 403 {
		t.Fatalf("bob promotes alice's memory: %d %v", code, res)
	}
	ans := e.dm(e.alice, "share launch window with group "+agentGroup)
	if !strings.HasPrefix(ans, "promoted") {
		t.Fatalf("promote to group: %s", ans)
	}
	groupVer := mustFetch(t, e.bc, nostr.Filter{Kinds: []int{30078}, Authors: []string{e.agent.pk}, Tags: nostr.TagMap{"h": {agentGroup}}})
	var gid string
	for _, ev := range groupVer {
		if strings.Contains(ev.Content, "launch window is dawn") && hasTag(ev, "snow:supersedes", privID) {
			gid = ev.ID
		}
	}
	if gid == "" {
		t.Fatalf("bob (member) does not read the group version: %v", ids(groupVer))
	}
	if evs, _ := fetch(t, cc, nostr.Filter{IDs: []string{gid}}); len(evs) != 0 {
		t.Fatal("carol (not a member) reads the group version")
	}
	if code, res := e.api(&e.alice, "POST", "/api/v1/privacy/promote", map[string]any{"id": gid, "tier": "group", "group": agentGroup}); code != 400 {
		t.Fatalf("promotion sideways: %d %v", code, res)
	}
	code, res := e.api(&e.alice, "POST", "/api/v1/privacy/promote", map[string]any{"id": gid, "tier": "public"})
	if code != 200 || res["tier"] != "public" || res["old"] != gid {
		t.Fatalf("promote to public: %d %v", code, res)
	}
	pub := mustFetch(t, cc, nostr.Filter{IDs: []string{res["new"].(string)}})
	if len(pub) != 1 || !strings.Contains(pub[0].Content, "launch window is dawn") || hasTag(pub[0], "h", agentGroup) || !hasTag(pub[0], "snow:supersedes", gid) {
		t.Fatalf("carol reads the public version: %s", mustJSON(pub))
	}
	// the audit names both promotions and the ids, never the words
	code, audit := e.api(&e.alice, "GET", "/api/v1/privacy/audit", nil)
	raw := mustJSON(audit)
	if code != 200 || strings.Count(raw, `"promote"`) != 2 || !strings.Contains(raw, gid) || strings.Contains(raw, "launch window") {
		t.Fatalf("audit: %d %s", code, raw)
	}
}
