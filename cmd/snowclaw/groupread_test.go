package main

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/privmsg"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/groupread"
	"github.com/snowclaw/snowclaw/internal/mcptest"
	"github.com/snowclaw/snowclaw/relay"
)

// encryptedGroup creates group g on the relay at url, lets members join
// and has the owner switch its encryption on.
func encryptedGroup(t *testing.T, url string, owner key, g string, members ...key) {
	t.Helper()
	oc := authed(t, url, owner)
	publishOK(t, oc, signed(owner, 9007, nostr.Tags{{"h", g}}, ""))
	for _, m := range members {
		publishOK(t, authed(t, url, m), signed(m, 9021, nostr.Tags{{"h", g}}, ""))
	}
	publishOK(t, oc, signed(owner, 9002, nostr.Tags{{"h", g}, {"encrypted"}}, ""))
}

// sentKeys are the keys of group g that k's gift wraps carry from the
// agent, read the way docs/group-encryption.md tells a client to, without
// the package under test.
func sentKeys(t *testing.T, url string, k key, agent, g string) map[int]snowclaw.GroupKey {
	t.Helper()
	evs, closed, err := authed(t, url, k).Fetch(nostr.Filter{Kinds: []int{snowclaw.KindGiftWrap}, Tags: nostr.TagMap{"p": {k.pk}}}, 5*time.Second)
	if err != nil || closed != "" {
		t.Fatalf("gift wraps: %v %s", err, closed)
	}
	keys := map[int]snowclaw.GroupKey{}
	for _, w := range evs {
		msg, err := privmsg.Unwrap(context.Background(), w, k.sk)
		if err != nil {
			continue
		}
		if m, err := snowclaw.ParseGroupKeyMessage(msg.From, msg.Content, agent); err == nil && m.Group == g {
			for _, gk := range m.Keys {
				keys[gk.Version] = gk
			}
		}
	}
	return keys
}

// sealedMem is k's memory in group g sealed with gk.
func sealedMem(t *testing.T, k key, g, topic, text string, gk snowclaw.GroupKey, tags ...nostr.Tag) nostr.Event {
	t.Helper()
	evt := nostr.Event{Kind: snowclaw.KindAppData, CreatedAt: nostr.Now(), Content: `{"summary":"` + text + `"}`,
		Tags: append(nostr.Tags{{"d", "snow:memory:" + topic}, {"h", g}}, tags...)}
	if err := snowclaw.SealGroupEvent(&evt, gk); err != nil {
		t.Fatal(err)
	}
	if err := evt.Sign(k.sk); err != nil {
		t.Fatal(err)
	}
	return evt
}

// TestSearchCmd_GroupMemoriesOpenForMembers: `snowclaw search --sec`
// prints an encrypted group's memories in plain to its members, opened
// with the keys the agent sent them; a non-member and an anonymous search
// get nothing of them; a removed member gets nothing written after the
// removal, and the keys they kept do not open it; a forged delivery is
// not taken.
func TestSearchCmd_GroupMemoriesOpenForMembers(t *testing.T) {
	owner, alice, carol, bob, mallory := newKey(), newKey(), newKey(), newKey(), newKey()
	dir := t.TempDir()
	url, _ := startServe(t, dir, owner.pk)
	keys, _ := relay.LoadKeys(dir, false)
	agent, _ := nostr.GetPublicKey(keys.AgentSecret)
	encryptedGroup(t, url, owner, "crew", alice, carol)
	v1 := sentKeys(t, url, alice, agent, "crew")[1]
	if v1.Secret == "" {
		t.Fatal("alice was sent no key")
	}
	ac := authed(t, url, alice)
	old := sealedMem(t, alice, "crew", "crew/launch", "the crew launch code is walrus-4410", v1)
	publishOK(t, ac, old)

	search := func(k *key, q string) string {
		t.Helper()
		args := []string{"search", q, "--relay", url}
		if k != nil {
			args = append(args, "--sec", k.nsec)
		}
		out, err := cli(t, nil, args...)
		if err != nil {
			t.Fatalf("search %q: %v\n%s", q, err, out)
		}
		return out
	}
	for name, k := range map[string]key{"alice": alice, "carol": carol} {
		out := search(&k, "crew launch code walrus-4410")
		if !strings.Contains(out, "the crew launch code is walrus-4410") || strings.Contains(out, old.Content[:24]) {
			t.Fatalf("%s's search does not print the group memory in plain:\n%s", name, out)
		}
	}
	if out := search(&bob, "crew launch code walrus-4410"); strings.Contains(out, "walrus") || strings.Contains(out, old.Content[:24]) {
		t.Fatalf("a non-member's search prints the group memory:\n%s", out)
	}
	if out := search(nil, "walrus-4410"); strings.Contains(out, "walrus") || strings.Contains(out, old.Content[:24]) {
		t.Fatalf("an anonymous search prints the group memory:\n%s", out)
	}

	// carol is removed: alice writes with version 2, carol gets nothing of it
	publishOK(t, authed(t, url, owner), signed(owner, 9001, nostr.Tags{{"h", "crew"}, {"p", carol.pk}}, ""))
	v2 := sentKeys(t, url, alice, agent, "crew")[2]
	if v2.Secret == "" {
		t.Fatal("alice was sent no version 2 after carol's removal")
	}
	fresh := sealedMem(t, alice, "crew", "crew/vault", "the vault phrase is heron-9923", v2)
	publishOK(t, ac, fresh)
	if out := search(&alice, "vault phrase heron-9923"); !strings.Contains(out, "the vault phrase is heron-9923") {
		t.Fatalf("alice's search after the rotation:\n%s", out)
	}
	if out := search(&carol, "vault phrase heron-9923"); strings.Contains(out, "heron") || strings.Contains(out, fresh.Content[:24]) {
		t.Fatalf("removed carol's search prints what was written after her removal:\n%s", out)
	}
	carolKeys, err := groupread.NewKeyring(carol.sk, func(context.Context) (string, error) { return agent, nil }, groupread.Dialer(url, carol.sk, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := carolKeys.Open(context.Background(), snowclaw.ReadEvent(&fresh)); !errors.Is(err, snowclaw.ErrNoGroupKey) {
		t.Fatalf("carol's keys on the memory written after her removal: %v, want ErrNoGroupKey", err)
	}
	if plain, err := carolKeys.Open(context.Background(), snowclaw.ReadEvent(&old)); err != nil || !strings.Contains(plain, "walrus-4410") {
		t.Fatalf("carol's keys on what she could read before: %q %v", plain, err)
	}

	// mallory hands alice a key of her own for the group: not taken
	mk, _ := snowclaw.NewGroupKey(3)
	forged, err := privmsg.Wrap(context.Background(), mallory.sk, alice.pk,
		snowclaw.GroupKeyMessage{Group: "crew", Current: 3, Keys: []snowclaw.GroupKey{mk}}.Encode(), nostr.Tags{{snowclaw.GroupKeyMessageType, "crew"}})
	if err != nil {
		t.Fatal(err)
	}
	publishOK(t, authed(t, url, mallory), forged)
	aliceKeys, _ := groupread.NewKeyring(alice.sk, func(context.Context) (string, error) { return agent, nil }, groupread.Dialer(url, alice.sk, 5*time.Second))
	if err := aliceKeys.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	vs := aliceKeys.Versions("crew")
	slices.Sort(vs)
	if !slices.Equal(vs, []int{1, 2}) || aliceKeys.Refused() != 1 {
		t.Fatalf("alice's keyring holds versions %v and refused %d deliveries; want [1 2] and mallory's", vs, aliceKeys.Refused())
	}
}

// TestCLI_MCPGroupMemories: `snowclaw mcp` as a member finds, lists and
// gets an encrypted group's memories with their text, history included;
// a non-member's finds nothing of them.
func TestCLI_MCPGroupMemories(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	owner, alice, bob := newKey(), newKey(), newKey()
	data := t.TempDir()
	c := startChild(t, data, "--owner", owner.npub)
	keys, _ := relay.LoadKeys(data, false)
	agent, _ := nostr.GetPublicKey(keys.AgentSecret)
	encryptedGroup(t, c.url, owner, "crew", alice, bob)
	v1 := sentKeys(t, c.url, alice, agent, "crew")[1]
	ac := authed(t, c.url, alice)
	first := sealedMem(t, alice, "crew", "crew/supplier", "the fuel supplier is Orbital Fuels", v1, nostr.Tag{"snow:version", "1"})
	publishOK(t, ac, first)
	second := sealedMem(t, alice, "crew", "crew/supplier-v2", "the fuel supplier is Lunar Propellants since May", v1,
		nostr.Tag{"snow:version", "2"}, nostr.Tag{"snow:supersedes", first.ID})
	publishOK(t, ac, second)
	// bob leaves before the MCP searches: he is a non-member now
	publishOK(t, authed(t, c.url, bob), signed(bob, 9022, nostr.Tags{{"h", "crew"}}, ""))

	am, _ := startMCP(t, nil, "--relay", c.url, "--sec", alice.nsec)
	hit := mcptest.Find(t, am, "fuel supplier Lunar Propellants", second.ID, 5*time.Second)
	if hit == nil || hit.Text != "the fuel supplier is Lunar Propellants since May" || hit.Tier != snowclaw.TierGroup || hit.Encrypted || hit.Group != "crew" {
		t.Fatalf("alice's memory_search: %+v", hit)
	}
	var listed struct{ Memories []snowclaw.MemoryView }
	if msg := mcptest.Call(t, am, "memory_list", map[string]any{"group": "crew", "include_superseded": true}, &listed); msg != "" || len(listed.Memories) != 2 {
		t.Fatalf("memory_list: %q %+v", msg, listed)
	}
	for _, m := range listed.Memories {
		if m.Encrypted || !strings.HasPrefix(m.Text, "the fuel supplier is ") {
			t.Fatalf("memory_list shows %+v", m)
		}
	}
	var detail snowclaw.MemoryDetail
	if msg := mcptest.Call(t, am, "memory_get", map[string]any{"id": second.ID}, &detail); msg != "" ||
		!strings.Contains(detail.Memory.Text, "Lunar") || len(detail.History) != 1 || detail.History[0].Text != "the fuel supplier is Orbital Fuels" {
		t.Fatalf("memory_get: %q %+v", msg, detail)
	}

	bm, _ := startMCP(t, []string{"SNOWCLAW_SEC=" + bob.nsec}, "--relay", c.url)
	if h := mcptest.Find(t, bm, "fuel supplier Lunar Propellants", second.ID, 0); h != nil {
		t.Fatalf("bob, no member, finds the group memory: %+v", h)
	}
	var bobList struct{ Memories []snowclaw.MemoryView }
	if msg := mcptest.Call(t, bm, "memory_list", map[string]any{"group": "crew"}, &bobList); msg != "" || len(bobList.Memories) != 0 {
		t.Fatalf("bob's memory_list: %q %+v", msg, bobList)
	}
}
