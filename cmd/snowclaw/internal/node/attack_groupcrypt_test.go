package node_test

import (
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
)

// TestAttack_GroupSealWrites: every way around the group tier's write rule
// a client could try, over a real socket, with the reason it gets.
func TestAttack_GroupSealWrites(t *testing.T) {
	e := startEnv(t, withSearch, withKeyManager, func(o *node.Options) { o.GroupsEncrypted = []string{"vault"} })
	alice, mallory := newUser(), newUser()
	oc, ac, mc := e.connect(&e.owner), e.connect(&alice), e.connect(&mallory)
	e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", "vault"}}, ""))
	e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", "plainroom"}}, ""))
	e.mustPublish(ac, mkEvent(alice, 9021, nostr.Tags{{"h", "vault"}}, ""))
	e.mustPublish(ac, mkEvent(alice, 9021, nostr.Tags{{"h", "plainroom"}}, ""))
	kr := receiveKeys(t, ac, alice, e.agent.pk, "vault")
	k, ok := kr.keys[1]
	if !ok {
		t.Fatalf("alice received no key version 1: %v (refused %v)", kr.keys, kr.refused)
	}
	// each attack re-tags and re-signs a well-formed seal
	retag := func(u user, evt nostr.Event, tags nostr.Tags) nostr.Event {
		evt.Tags = tags
		if err := evt.Sign(u.sk); err != nil {
			t.Fatal(err)
		}
		return evt
	}
	base := sealedMemory(t, alice, "vault", "x", "words", k)
	enc, ver := nostr.Tag{"encrypted", "nip44-group"}, nostr.Tag{"snow:key-version", "1"}
	d, h := nostr.Tag{"d", "snow:memory:x"}, nostr.Tag{"h", "vault"}
	outer := e.t
	for _, tc := range []struct {
		name   string
		c      int // 0 alice, 1 mallory
		evt    nostr.Event
		reason string
	}{
		{"non-member seals into the group", 1, retag(mallory, base, nostr.Tags{d, h, enc, ver}), "restricted:"},
		{"seal names a person", 0, retag(alice, base, nostr.Tags{d, h, enc, ver, {"p", mallory.pk}}), "invalid:"},
		{"seal mixed with the agent's marker", 0, retag(alice, base, nostr.Tags{d, h, enc, {"encrypted", "nip44"}, ver}), "invalid:"},
		{"seal beside a valueless marker", 0, retag(alice, base, nostr.Tags{d, h, {"encrypted"}, enc, ver}), "invalid:"},
		{"seal marked twice", 0, retag(alice, base, nostr.Tags{d, h, enc, enc, ver}), "invalid:"},
		{"seal with a valueless p tag", 0, retag(alice, base, nostr.Tags{d, h, enc, ver, {"p"}}), "invalid:"},
		{"seal in two groups", 0, retag(alice, base, nostr.Tags{d, h, {"h", "plainroom"}, enc, ver}), "invalid:"},
		{"seal with an empty h beside the group", 0, retag(alice, base, nostr.Tags{d, {"h", ""}, h, enc, ver}), "invalid:"},
		{"a valueless marker on a group memory: internal, the agent's", 0, memory(alice, "marked", "plain words", h, nostr.Tag{"encrypted"}), "restricted:"},
		{"seal without a version", 0, retag(alice, base, nostr.Tags{d, h, enc}), "invalid:"},
		{"seal with a future version", 0, retag(alice, base, nostr.Tags{d, h, enc, {"snow:key-version", "2"}}), "invalid:"},
		{"seal on a chat message", 0, retag(alice, mkEvent(alice, 9, nil, base.Content), nostr.Tags{h, enc, ver}), "invalid:"},
		{"seal to a group without keys", 0, retag(alice, base, nostr.Tags{d, {"h", "plainroom"}, enc, ver}), "restricted:"},
		{"garbage under the right version", 0, retag(alice, mkEvent(alice, 30078, nil, "AgAAAA=="), nostr.Tags{d, h, enc, ver}), "invalid:"},
		{"plain memory to an encrypted group", 0, memory(alice, "plain", "plain words", h), "restricted:"},
		{"someone writes a key record", 1, mkEvent(mallory, 30078, nostr.Tags{{"d", snowclaw.PrefixGroupKey + "vault"}}, "{}"), "restricted:"},
		{"the owner writes a key record", -1, mkEvent(e.owner, 30078, nostr.Tags{{"d", snowclaw.PrefixGroupKey + "vault"}}, "{}"), "restricted:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ac
			switch tc.c {
			case 1:
				c = mc
			case -1:
				c = oc
			}
			e.t = t
			e.refusedWith(c, tc.evt, tc.reason)
		})
	}
	e.t = outer
	// the well-formed one is stored, so the refusals above are about
	// what they changed
	e.mustPublish(ac, base)
}
