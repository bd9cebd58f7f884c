package snowclaw_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// The test vector of docs/group-encryption.md: another client's
// implementation must produce the same conversation key and payload.
const (
	vecSecret  = "7f3b1c5e9a2d4f6b8c0e1a3b5d7f9e2c4a6b8d0f1e3c5a7b9d2f4e6a8c0b1d3e"
	vecPubkey  = "b43fc4dd33373d8b5747d843dba3a4c18b548681ee57ce56351b2c0379b9a096"
	vecConvKey = "cbc05c51801162eb9c5a0e2ada98b0e745d863f0e188af16a4113dc0371600e5"
	vecNonce   = "0101010101010101010101010101010101010101010101010101010101010101"
	vecPlain   = `{"summary":"The launch moved to 3 March"}`
	vecPayload = "AgEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBr7gbZMnTeudHVcjKmI2Kqc3NPZjULj/ZdGroTdPhN7DL1hPgb0MV2qDgIwxz2kvM/dbdNRhGY41PwJMihIBqy4piJ8grE954rx2c4Y7YuXKqnKMROYsRSK9dYfT6BkBAbX0="
)

func TestGroupSeal_Vector(t *testing.T) {
	// the conversation key from first principles, not through nip44: the
	// x coordinate of secret·(secret·G), then HKDF-extract with salt
	// "nip44-v2" (an HMAC-SHA256 keyed by the salt)
	raw, _ := hex.DecodeString(vecSecret)
	priv, pub := btcec.PrivKeyFromBytes(raw)
	shared := btcec.GenerateSharedSecret(priv, pub)
	mac := hmac.New(sha256.New, []byte("nip44-v2"))
	mac.Write(shared)
	if got := hex.EncodeToString(mac.Sum(nil)); got != vecConvKey {
		t.Fatalf("conversation key from first principles = %s, the vector says %s", got, vecConvKey)
	}

	k := snowclaw.GroupKey{Version: 1, Secret: vecSecret, Pubkey: vecPubkey}
	if err := k.Check(); err != nil {
		t.Fatal(err)
	}
	nonce, _ := hex.DecodeString(vecNonce)
	got, err := snowclaw.SealGroupContent(vecPlain, k, snowclaw.WithNonce(nonce))
	if err != nil || got != vecPayload {
		t.Fatalf("payload = %q, %v; want the vector's", got, err)
	}
	plain, err := snowclaw.OpenGroupContent(vecPayload, k)
	if err != nil || plain != vecPlain {
		t.Fatalf("open = %q, %v", plain, err)
	}
}

func sealedEvent(t *testing.T, k snowclaw.GroupKey, group, text string) *snowclaw.Event {
	t.Helper()
	evt := &nostr.Event{Kind: snowclaw.KindAppData, Content: text, Tags: nostr.Tags{{"d", "snow:memory:project/x"}, {"h", group}}}
	if err := snowclaw.SealGroupEvent(evt, k); err != nil {
		t.Fatal(err)
	}
	return snowclaw.ReadEvent(evt)
}

func TestGroupSeal_OpenNeedsTheVersionsKey(t *testing.T) {
	k1, _ := snowclaw.NewGroupKey(1)
	k2, _ := snowclaw.NewGroupKey(2)
	evt := sealedEvent(t, k2, "team", "secret plans")
	if evt.Tier != snowclaw.TierGroup {
		t.Fatalf("tier %s, want group", evt.Tier)
	}
	holds := func(ks ...snowclaw.GroupKey) func(string, int) (snowclaw.GroupKey, bool) {
		return func(g string, v int) (snowclaw.GroupKey, bool) {
			for _, k := range ks {
				if g == "team" && k.Version == v {
					return k, true
				}
			}
			return snowclaw.GroupKey{}, false
		}
	}
	if plain, err := snowclaw.OpenGroup(evt, holds(k1, k2)); err != nil || plain != "secret plans" {
		t.Fatalf("holder of v2: %q, %v", plain, err)
	}
	if _, err := snowclaw.OpenGroup(evt, holds(k1)); !errors.Is(err, snowclaw.ErrNoGroupKey) {
		t.Fatalf("holder of v1 only: %v, want ErrNoGroupKey", err)
	}
	// a departed member who relabels v1 as v2 still cannot open it
	forged := k1
	forged.Version = 2
	if _, err := snowclaw.OpenGroup(evt, holds(forged)); !errors.Is(err, snowclaw.ErrDecrypt) {
		t.Fatalf("old key under the new version: %v, want ErrDecrypt", err)
	}
	// the agent's own conversations never open a group seal
	agent := nostr.GeneratePrivateKey()
	if _, err := snowclaw.Open(evt, agent, "", ""); !errors.Is(err, snowclaw.ErrDecrypt) {
		t.Fatalf("Open with the agent key: %v", err)
	}
}

func TestGroupSealOf_Shape(t *testing.T) {
	enc := nostr.Tag{"encrypted", "nip44-group"}
	ver := nostr.Tag{"snow:key-version", "3"}
	d := nostr.Tag{"d", "snow:memory:x"}
	h := nostr.Tag{"h", "team"}
	for _, tc := range []struct {
		name string
		kind int
		tags nostr.Tags
		ok   bool
	}{
		{"well formed", snowclaw.KindAppData, nostr.Tags{d, h, enc, ver}, true},
		{"agent's group record", snowclaw.KindAppData, nostr.Tags{{"d", "snowclaw:memory:group:team"}, h, enc, ver}, true},
		{"chat kind", snowclaw.KindChat, nostr.Tags{h, enc, ver}, false},
		{"config namespace", snowclaw.KindAppData, nostr.Tags{{"d", "snowclaw:config:group:team"}, h, enc, ver}, false},
		{"no group", snowclaw.KindAppData, nostr.Tags{d, enc, ver}, false},
		{"two groups", snowclaw.KindAppData, nostr.Tags{d, h, {"h", "other"}, enc, ver}, false},
		{"names a person", snowclaw.KindAppData, nostr.Tags{d, h, enc, ver, {"p", strings.Repeat("1", 64)}}, false},
		{"a valueless p tag", snowclaw.KindAppData, nostr.Tags{d, h, enc, ver, {"p"}}, false},
		{"a valueless h tag beside the group", snowclaw.KindAppData, nostr.Tags{d, h, {"h"}, enc, ver}, false},
		{"a valueless marker beside the group's", snowclaw.KindAppData, nostr.Tags{d, h, enc, {"encrypted"}, ver}, false},
		{"mixed markers", snowclaw.KindAppData, nostr.Tags{d, h, enc, {"encrypted", "nip44"}, ver}, false},
		{"marker twice", snowclaw.KindAppData, nostr.Tags{d, h, enc, enc, ver}, false},
		{"no version", snowclaw.KindAppData, nostr.Tags{d, h, enc}, false},
		{"two versions", snowclaw.KindAppData, nostr.Tags{d, h, enc, ver, {"snow:key-version", "4"}}, false},
		{"version zero", snowclaw.KindAppData, nostr.Tags{d, h, enc, {"snow:key-version", "0"}}, false},
		{"version padded", snowclaw.KindAppData, nostr.Tags{d, h, enc, {"snow:key-version", "03"}}, false},
		{"version not a number", snowclaw.KindAppData, nostr.Tags{d, h, enc, {"snow:key-version", "x"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := snowclaw.GroupSealOf(snowclaw.ReadEvent(&nostr.Event{Kind: tc.kind, Tags: tc.tags}))
			if (err == nil) != tc.ok {
				t.Fatalf("GroupSealOf: %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, snowclaw.ErrGroupSealShape) {
				t.Fatalf("error %v is not ErrGroupSealShape", err)
			}
		})
	}
}

func TestReadEvent_GroupSealTier(t *testing.T) {
	for _, tc := range []struct {
		name string
		tags nostr.Tags
		want snowclaw.Tier
	}{
		{"group seal", nostr.Tags{{"h", "g"}, {"encrypted", "nip44-group"}}, snowclaw.TierGroup},
		{"group seal without h: nobody's group", nostr.Tags{{"encrypted", "nip44-group"}}, snowclaw.TierInternal},
		{"group seal naming a person", nostr.Tags{{"h", "g"}, {"encrypted", "nip44-group"}, {"p", strings.Repeat("1", 64)}}, snowclaw.TierPrivate},
		{"mixed markers", nostr.Tags{{"h", "g"}, {"encrypted", "nip44-group"}, {"encrypted", "nip44"}}, snowclaw.TierInternal},
		{"agent's own seal with h", nostr.Tags{{"h", "g"}, {"encrypted", "nip44"}}, snowclaw.TierInternal},
	} {
		if got := snowclaw.ReadEvent(&nostr.Event{Kind: snowclaw.KindAppData, Tags: tc.tags}).Tier; got != tc.want {
			t.Errorf("%s: tier %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestParseGroupKeyMessage(t *testing.T) {
	agent := strings.Repeat("a", 64)
	k, _ := snowclaw.NewGroupKey(2)
	good := snowclaw.GroupKeyMessage{Group: "team", Current: 2, Keys: []snowclaw.GroupKey{k}}
	if m, err := snowclaw.ParseGroupKeyMessage(agent, good.Encode(), agent); err != nil || m.Keys[0] != k {
		t.Fatalf("agent's delivery: %+v, %v", m, err)
	}
	other, _ := snowclaw.NewGroupKey(2)
	lying := k
	lying.Pubkey = other.Pubkey // the secret does not match the key it claims
	for name, tc := range map[string]struct {
		from string
		msg  snowclaw.GroupKeyMessage
		want error
	}{
		"someone else's delivery": {strings.Repeat("b", 64), good, snowclaw.ErrKeyNotFromAgent},
		"no agent known":          {"", good, snowclaw.ErrKeyNotFromAgent},
		"secret and pubkey apart": {agent, snowclaw.GroupKeyMessage{Group: "team", Current: 2, Keys: []snowclaw.GroupKey{lying}}, nil},
		"current key missing":     {agent, snowclaw.GroupKeyMessage{Group: "team", Current: 3, Keys: []snowclaw.GroupKey{k}}, nil},
		"no group":                {agent, snowclaw.GroupKeyMessage{Current: 2, Keys: []snowclaw.GroupKey{k}}, nil},
	} {
		agentKey := agent
		if name == "no agent known" {
			agentKey = ""
		}
		_, err := snowclaw.ParseGroupKeyMessage(tc.from, tc.msg.Encode(), agentKey)
		if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want a refusal (%v)", name, err, tc.want)
		}
	}
	if _, err := snowclaw.ParseGroupKeyMessage(agent, `{"type":"something else"}`, agent); err == nil {
		t.Error("a message of another type was taken for a key delivery")
	}
}
