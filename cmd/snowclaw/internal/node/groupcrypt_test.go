package node_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/privmsg"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/internal/wsclient"
)

// withKeyManager runs the agent without a model: over a shared store
// group keys are made, rotated and sent by the agent's leader only.
func withKeyManager(o *node.Options) { o.Agent = node.AgentOptions{Enabled: true} }

// keyring is what a member's client knows of a group's keys: only what
// arrived in gift wraps it could open, from the agent it pinned (GET
// /api/v1/health "agent"), as docs/group-encryption.md tells clients.
type keyring struct {
	keys    map[int]snowclaw.GroupKey
	current int
	refused []error // deliveries the client did not trust
}

// receiveKeys reads u's gift wraps from the relay and keeps the group
// keys the agent sent for group.
func receiveKeys(t *testing.T, c *wsclient.Client, u user, agent, group string) *keyring {
	t.Helper()
	kr := &keyring{keys: map[int]snowclaw.GroupKey{}}
	for _, w := range mustFetch(t, c, nostr.Filter{Kinds: []int{snowclaw.KindGiftWrap}, Tags: nostr.TagMap{"p": {u.pk}}}) {
		msg, err := privmsg.Unwrap(context.Background(), w, u.sk)
		if err != nil {
			kr.refused = append(kr.refused, err)
			continue
		}
		if len(msg.Tags.Find(snowclaw.GroupKeyMessageType)) == 0 {
			continue // a chat message, not a key
		}
		m, err := snowclaw.ParseGroupKeyMessage(msg.From, msg.Content, agent)
		if err != nil {
			kr.refused = append(kr.refused, err)
			continue
		}
		if m.Group != group {
			continue
		}
		for _, k := range m.Keys {
			kr.keys[k.Version] = k
		}
		kr.current = max(kr.current, m.Current)
	}
	return kr
}

func (kr *keyring) keyOf(_ string, v int) (snowclaw.GroupKey, bool) {
	k, ok := kr.keys[v]
	return k, ok
}

// sealedMemory is a member's group memory sealed with key k.
func sealedMemory(t *testing.T, u user, group, topic, text string, k snowclaw.GroupKey) nostr.Event {
	t.Helper()
	evt := nostr.Event{Kind: snowclaw.KindAppData, CreatedAt: nostr.Now(), Content: `{"summary":"` + text + `"}`,
		Tags: nostr.Tags{{"d", "snow:memory:" + topic}, {"h", group}}}
	if err := snowclaw.SealGroupEvent(&evt, k); err != nil {
		t.Fatal(err)
	}
	if err := evt.Sign(u.sk); err != nil {
		t.Fatal(err)
	}
	return evt
}

func TestGroupCrypt_RotationOnRemoval(t *testing.T) {
	logs := new(syncBuffer)
	e := startAgentEnv(t, func(o *node.Options) {
		o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	const canary1, canary2 = "walrus-umbra-4410", "heron-basalt-9923"
	carol, mallory := newUser(), newUser()
	cc, mc, oc := e.connect(&carol), e.connect(&mallory), e.connect(&e.owner)
	e.mustPublish(cc, mkEvent(carol, 9021, nostr.Tags{{"h", agentGroup}}, ""))
	code, health := e.api(nil, "GET", "/api/v1/health", nil)
	agentPK, _ := health["agent"].(string)
	if code != 200 || agentPK != e.agent.pk {
		t.Fatalf("health names agent %q (%d)", agentPK, code)
	}

	// a member who is no admin cannot switch encryption on; an admin can
	e.refusedWith(e.ac, mkEvent(e.alice, 9002, nostr.Tags{{"h", agentGroup}, {"encrypted"}}, ""), "restricted:")
	if got := receiveKeys(t, e.ac, e.alice, agentPK, agentGroup); len(got.keys) != 0 {
		t.Fatalf("a refused switch made keys: %v", got.keys)
	}
	e.mustPublish(oc, mkEvent(e.owner, 9002, nostr.Tags{{"h", agentGroup}, {"encrypted"}}, ""))
	if meta := e.groupMeta(&e.alice, 39000, agentGroup); meta == nil || !hasFlag(meta, "encrypted") {
		t.Fatalf("39000 does not say the group is encrypted: %v", meta)
	}
	alice1, bob1, carol1 := receiveKeys(t, e.ac, e.alice, agentPK, agentGroup),
		receiveKeys(t, e.bc, e.bob, agentPK, agentGroup), receiveKeys(t, cc, carol, agentPK, agentGroup)
	for name, kr := range map[string]*keyring{"alice": alice1, "bob": bob1, "carol": carol1} {
		if kr.current != 1 || len(kr.keys) != 1 {
			t.Fatalf("%s holds keys %v (current %d), want version 1", name, kr.keys, kr.current)
		}
	}
	if receiveKeys(t, mc, mallory, agentPK, agentGroup).current != 0 {
		t.Fatal("a non-member received the group key")
	}

	// a member's plain group memory is refused; a sealed one is stored
	e.refusedWith(e.ac, memory(e.alice, "team/plain", "plain words", nostr.Tag{"h", agentGroup}), "restricted:")
	old := e.mustPublish(e.ac, sealedMemory(t, e.alice, agentGroup, "team/launch", "launch code is "+canary1, alice1.keys[1]))
	if plain, err := snowclaw.OpenGroup(snowclaw.ReadEvent(&old), bob1.keyOf); err != nil || !strings.Contains(plain, canary1) {
		t.Fatalf("bob cannot open version 1: %q, %v", plain, err)
	}

	// bob is removed: the others get version 2, bob nothing
	e.mustPublish(oc, mkEvent(e.owner, 9001, nostr.Tags{{"h", agentGroup}, {"p", e.bob.pk}}, ""))
	alice2, bob2, carol2 := receiveKeys(t, e.ac, e.alice, agentPK, agentGroup),
		receiveKeys(t, e.bc, e.bob, agentPK, agentGroup), receiveKeys(t, cc, carol, agentPK, agentGroup)
	if alice2.current != 2 || carol2.current != 2 || bob2.current != 1 {
		t.Fatalf("after the removal: alice at %d, carol at %d, bob at %d; want 2, 2, 1", alice2.current, carol2.current, bob2.current)
	}
	// the old key no longer writes; the new one does
	e.refusedWith(e.ac, sealedMemory(t, e.alice, agentGroup, "team/stale", "stale key", alice2.keys[1]), "invalid:")
	fresh := e.mustPublish(e.ac, sealedMemory(t, e.alice, agentGroup, "team/vault", "vault phrase is "+canary2, alice2.keys[2]))

	// carol opens it with the key she was sent; bob's keys cannot, even
	// when he tries his old key under the new version's number
	if plain, err := snowclaw.OpenGroup(snowclaw.ReadEvent(&fresh), carol2.keyOf); err != nil || !strings.Contains(plain, canary2) {
		t.Fatalf("carol cannot open version 2: %q, %v", plain, err)
	}
	if _, err := snowclaw.OpenGroup(snowclaw.ReadEvent(&fresh), bob2.keyOf); !errors.Is(err, snowclaw.ErrNoGroupKey) {
		t.Fatalf("bob opening version 2: %v, want ErrNoGroupKey", err)
	}
	if _, err := snowclaw.OpenGroupContent(fresh.Content, bob2.keys[1]); !errors.Is(err, snowclaw.ErrDecrypt) {
		t.Fatalf("bob's old key on the new memory: %v, want ErrDecrypt", err)
	}
	// old memories stay readable with the old key
	if plain, err := snowclaw.OpenGroup(snowclaw.ReadEvent(&old), carol2.keyOf); err != nil || !strings.Contains(plain, canary1) {
		t.Fatalf("carol cannot open version 1 any more: %q, %v", plain, err)
	}

	// the relay still serves group memories to members only
	if got := mustFetch(t, cc, nostr.Filter{IDs: []string{fresh.ID}}); len(got) != 1 {
		t.Fatalf("carol reads %d of the new memory", len(got))
	}
	if got, _ := fetch(t, e.bc, nostr.Filter{IDs: []string{fresh.ID, old.ID}}); len(got) != 0 {
		t.Fatalf("bob, removed, still reads %d group memories", len(got))
	}

	// search ranks the decrypted words for members, nothing for others
	for _, q := range []string{"vault phrase " + canary2, canary2} {
		if got := mustFetch(t, cc, nostr.Filter{Kinds: []int{snowclaw.KindAppData}, Search: q}); !contains(got, fresh.ID) {
			t.Fatalf("carol's search %q misses the sealed memory: %v", q, ids(got))
		}
		for name, c := range map[string]*wsclient.Client{"bob": e.bc, "mallory": mc, "anonymous": e.connect(nil)} {
			if got, _ := fetch(t, c, nostr.Filter{Kinds: []int{snowclaw.KindAppData}, Search: q}); contains(got, fresh.ID) || contains(got, old.ID) {
				t.Fatalf("%s's search %q finds the group's sealed memory", name, q)
			}
		}
	}

	// the keys rest sealed: nobody but the agent reads their record
	for name, c := range map[string]*wsclient.Client{"owner": oc, "carol": cc} {
		if got, _ := fetch(t, c, nostr.Filter{Kinds: []int{snowclaw.KindAppData}, Tags: nostr.TagMap{"d": {snowclaw.PrefixGroupKey + agentGroup}}}); len(got) != 0 {
			t.Fatalf("%s reads the group's key record", name)
		}
	}

	// restarted, the relay reads its keys back: search still finds it
	e.restart()
	cc = e.connect(&carol)
	if got := mustFetch(t, cc, nostr.Filter{Kinds: []int{snowclaw.KindAppData}, Search: canary2}); !contains(got, fresh.ID) {
		t.Fatalf("after a restart carol's search misses the sealed memory: %v", ids(got))
	}
	e.stop()
	for _, s := range []string{canary1, canary2, alice2.keys[1].Secret, alice2.keys[2].Secret} {
		if files := grepDir(t, e.dir, s); len(files) > 0 {
			t.Fatalf("%.8s… on disk: %v", s, files)
		}
		if strings.Contains(logs.String(), s) {
			t.Fatalf("%.8s… in the logs", s)
		}
	}
}

// TestGroupCrypt_AgentSealsAndRecalls: in an encrypted group the agent's
// own memories rest sealed with the group key, a member opens them with
// the key they were sent, and the agent still recalls them (it reads them
// opened, in RAM), after a restart too.
func TestGroupCrypt_AgentSealsAndRecalls(t *testing.T) {
	e := startAgentEnv(t)
	e.mustPublish(e.connect(&e.owner), mkEvent(e.owner, 9002, nostr.Tags{{"h", agentGroup}, {"encrypted"}}, ""))
	e.say(e.ac, e.alice, "@Snowclaw remember that the hydrazine supplier is Orbital Fuels Ltd")
	if _, ok := e.llm.WaitRequests(1, testwait.Scaled(5*time.Second)); !ok {
		t.Fatal("no model call for the remember request")
	}
	e.settle()
	if err := e.n.Agent().Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	alice := receiveKeys(t, e.ac, e.alice, e.agent.pk, agentGroup)
	evs := mustFetch(t, e.ac, nostr.Filter{Kinds: []int{snowclaw.KindAppData}, Authors: []string{e.agent.pk}, Tags: nostr.TagMap{"h": {agentGroup}}})
	opened := 0
	for _, ev := range evs {
		if !snowclaw.ReadEvent(ev).GroupSealed || strings.Contains(ev.Content, "Orbital") {
			t.Fatalf("the agent wrote a group memory of an encrypted group in plain: %s", mustJSON(ev))
		}
		if plain, err := snowclaw.OpenGroup(snowclaw.ReadEvent(ev), alice.keyOf); err == nil && strings.Contains(plain, "Orbital Fuels") {
			opened++
		}
	}
	if opened == 0 {
		t.Fatalf("alice opens none of the agent's %d group memories", len(evs))
	}
	for i, restart := range []bool{false, true} {
		if restart {
			e.restart()
			e.bc = e.connect(&e.bob)
		}
		e.say(e.bc, e.bob, fmt.Sprintf("@Snowclaw who is our hydrazine supplier? (asking %d)", i))
		if _, ok := e.llm.WaitRequests(2+i, testwait.Scaled(5*time.Second)); !ok {
			t.Fatal("no model call")
		}
		if p := e.llm.LastPrompt(); !strings.Contains(p, "Orbital Fuels Ltd") {
			t.Fatalf("restart %v: the sealed group memory was not recalled:\n%s", restart, p)
		}
	}
}

// forgedDelivery is a gift wrap to u whose rumor claims the agent wrote
// it while the seal is signed by forger (NIP-17's impersonation).
func forgedDelivery(t *testing.T, forger user, agent string, to user, content string) nostr.Event {
	t.Helper()
	rumor := nostr.Event{PubKey: agent, CreatedAt: nostr.Now(), Kind: 14, Content: content,
		Tags: nostr.Tags{{"p", to.pk}, {snowclaw.GroupKeyMessageType, "vault"}}}
	rumor.ID = rumor.GetID()
	ck, _ := nip44.GenerateConversationKey(to.pk, forger.sk)
	sealed, err := nip44.Encrypt(rumor.String(), ck)
	if err != nil {
		t.Fatal(err)
	}
	seal := nostr.Event{Kind: 13, CreatedAt: nostr.Now(), Tags: nostr.Tags{}, Content: sealed}
	if err := seal.Sign(forger.sk); err != nil {
		t.Fatal(err)
	}
	eph := newUser()
	ck, _ = nip44.GenerateConversationKey(to.pk, eph.sk)
	wrapped, err := nip44.Encrypt(seal.String(), ck)
	if err != nil {
		t.Fatal(err)
	}
	return mkEvent(eph, snowclaw.KindGiftWrap, nostr.Tags{{"p", to.pk}}, wrapped)
}

// TestGroupCrypt_ForgedDeliveryLeaveAndConfig: a group the config keeps
// encrypted cannot be switched off by its admin; a key delivery that is
// not the agent's is not trusted by the client; a member who leaves
// makes a new key; a newcomer gets every key.
func TestGroupCrypt_ForgedDeliveryLeaveAndConfig(t *testing.T) {
	e := startEnv(t, withSearch, withKeyManager, func(o *node.Options) { o.GroupsEncrypted = []string{"vault"} })
	alice, dave, mallory := newUser(), newUser(), newUser()
	oc, ac, mc := e.connect(&e.owner), e.connect(&alice), e.connect(&mallory)
	e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", "vault"}}, ""))
	e.mustPublish(ac, mkEvent(alice, 9021, nostr.Tags{{"h", "vault"}}, ""))
	e.refusedWith(oc, mkEvent(e.owner, 9002, nostr.Tags{{"h", "vault"}, {"unencrypted"}}, ""), "restricted:")
	real := receiveKeys(t, ac, alice, e.agent.pk, "vault")
	if real.current != 1 || len(real.refused) != 0 {
		t.Fatalf("alice's keys: current %d, refused %v", real.current, real.refused)
	}

	// mallory hands alice a key of her own, signed as herself, then one
	// whose rumor claims to be the agent's
	mk, _ := snowclaw.NewGroupKey(7)
	msg := snowclaw.GroupKeyMessage{Group: "vault", Current: 7, Keys: []snowclaw.GroupKey{mk}}.Encode()
	own, err := privmsg.Wrap(context.Background(), mallory.sk, alice.pk, msg, nostr.Tags{{snowclaw.GroupKeyMessageType, "vault"}})
	if err != nil {
		t.Fatal(err)
	}
	e.mustPublish(mc, own)
	e.mustPublish(mc, forgedDelivery(t, mallory, e.agent.pk, alice, msg))
	got := receiveKeys(t, ac, alice, e.agent.pk, "vault")
	if got.current != 1 || len(got.keys) != 1 || got.keys[1] != real.keys[1] {
		t.Fatalf("alice's client took a forged key: %v (current %d)", got.keys, got.current)
	}
	var notAgent, impersonation bool
	for _, err := range got.refused {
		notAgent = notAgent || errors.Is(err, snowclaw.ErrKeyNotFromAgent)
		impersonation = impersonation || errors.Is(err, privmsg.ErrImpersonation)
	}
	if !notAgent || !impersonation {
		t.Fatalf("refusals %v: want one not from the agent and one impersonation", got.refused)
	}
	// and the relay does not take a memory sealed with mallory's key
	e.refusedWith(ac, sealedMemory(t, alice, "vault", "x", "sealed with a forged key", mk), "invalid:")

	// alice leaves: the owner gets version 2, alice keeps only 1
	e.mustPublish(ac, mkEvent(alice, 9022, nostr.Tags{{"h", "vault"}}, ""))
	e.waitMembers("vault", e.owner.pk)
	if o := receiveKeys(t, oc, e.owner, e.agent.pk, "vault"); o.current != 2 {
		t.Fatalf("after alice left the owner holds version %d, want 2", o.current)
	}
	if a := receiveKeys(t, ac, alice, e.agent.pk, "vault"); a.current != 1 || len(a.keys) != 1 {
		t.Fatalf("alice, gone, received %v", a.keys)
	}
	// a newcomer gets every version, to read the group's history
	dc := e.connect(&dave)
	e.mustPublish(dc, mkEvent(dave, 9021, nostr.Tags{{"h", "vault"}}, ""))
	if d := receiveKeys(t, dc, dave, e.agent.pk, "vault"); d.current != 2 || len(d.keys) != 2 {
		t.Fatalf("dave holds %v (current %d), want versions 1 and 2", d.keys, d.current)
	}
}
