package node_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/privmsg"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/wsclient"
)

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
	if plain, err := snowclaw.OpenGroup(&old, bob1.keyOf); err != nil || !strings.Contains(plain, canary1) {
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
	if plain, err := snowclaw.OpenGroup(&fresh, carol2.keyOf); err != nil || !strings.Contains(plain, canary2) {
		t.Fatalf("carol cannot open version 2: %q, %v", plain, err)
	}
	if _, err := snowclaw.OpenGroup(&fresh, bob2.keyOf); !errors.Is(err, snowclaw.ErrNoGroupKey) {
		t.Fatalf("bob opening version 2: %v, want ErrNoGroupKey", err)
	}
	if _, err := snowclaw.OpenGroupContent(fresh.Content, bob2.keys[1]); !errors.Is(err, snowclaw.ErrDecrypt) {
		t.Fatalf("bob's old key on the new memory: %v, want ErrDecrypt", err)
	}
	// old memories stay readable with the old key
	if plain, err := snowclaw.OpenGroup(&old, carol2.keyOf); err != nil || !strings.Contains(plain, canary1) {
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
