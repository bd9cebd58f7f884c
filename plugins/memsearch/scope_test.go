package memsearch

import (
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// Two events share a scope only when the read rule cannot tell them
// apart: every input it reads is in the key.
func TestScopeOf(t *testing.T) {
	const alice, bob, agent = "aa", "bb", "cc"
	ev := func(kind int, pk string, tags ...nostr.Tag) *snowclaw.Event {
		return snowclaw.ReadEvent(&nostr.Event{Kind: kind, PubKey: pk, Tags: tags})
	}
	mem := func(pk, topic string, tags ...nostr.Tag) *snowclaw.Event {
		return ev(30078, pk, append(nostr.Tags{{"d", "snow:memory:" + topic}}, tags...)...)
	}
	enc := nostr.Tag{"encrypted", "nip44"}
	for _, tc := range []struct {
		name string
		a, b *snowclaw.Event
		same bool
	}{
		{"public memories of two authors", mem(alice, "x"), mem(bob, "y"), true},
		{"public note and public memory", ev(1, alice), mem(bob, "y"), true},
		{"group chat of two authors", ev(9, alice, nostr.Tag{"h", "g"}), ev(9, bob, nostr.Tag{"h", "g"}), false},
		{"group chat, one author, two messages", ev(9, alice, nostr.Tag{"h", "g"}), ev(9, alice, nostr.Tag{"h", "g"}, nostr.Tag{"e", "x"}), true},
		{"two groups", ev(9, alice, nostr.Tag{"h", "g"}), ev(9, alice, nostr.Tag{"h", "k"}), false},
		{"group chat and group memory", ev(9, alice, nostr.Tag{"h", "g"}), mem(alice, "x", nostr.Tag{"h", "g"}), false},
		{"private memories of one person, two topics", mem(agent, "x", nostr.Tag{"p", alice}, enc), mem(agent, "y", nostr.Tag{"p", alice}, enc), true},
		{"private memories of two people", mem(agent, "x", nostr.Tag{"p", alice}, enc), mem(agent, "x", nostr.Tag{"p", bob}, enc), false},
		{"private memory by the agent and by the person", mem(agent, "x", nostr.Tag{"p", alice}, enc), mem(alice, "x", nostr.Tag{"p", alice}, enc), false},
		{"extra p tag", mem(agent, "x", nostr.Tag{"p", alice}, enc), mem(agent, "x", nostr.Tag{"p", alice}, nostr.Tag{"p", bob}, enc), false},
		{"expiring public memory", mem(alice, "x"), mem(alice, "x", nostr.Tag{"expiration", "5"}), false},
		{"person records of two people", mem(agent, "x"), ev(30078, agent, nostr.Tag{"d", "snowclaw:memory:npub:npub1a"}), false},
		{"two person records", ev(30078, agent, nostr.Tag{"d", "snowclaw:memory:npub:npub1a"}), ev(30078, agent, nostr.Tag{"d", "snowclaw:memory:npub:npub1b"}), false},
		// the key is the read rule's view of the tags, not the tags
		{"two h tags and one of their groups", ev(9, alice, nostr.Tag{"h", "g"}, nostr.Tag{"h", "k"}), ev(9, alice, nostr.Tag{"h", "g"}), false},
		{"an empty h and no h", ev(9, alice, nostr.Tag{"h", ""}), ev(1, alice), false},
		{"refused h tags and a group named like MalformedGroup", ev(9, alice, nostr.Tag{"h", "g"}, nostr.Tag{"h", "k"}), ev(9, alice, nostr.Tag{"h", snowclaw.MalformedGroup}), false},
		{"refused h tags of two shapes, one author", ev(9, alice, nostr.Tag{"h", "g"}, nostr.Tag{"h", "k"}), ev(9, alice, nostr.Tag{"h"}), true},
		{"refused h tags of two authors", ev(9, alice, nostr.Tag{"h", "g"}, nostr.Tag{"h", "k"}), ev(9, bob, nostr.Tag{"h", "g"}, nostr.Tag{"h", "k"}), false},
		{"an unreadable expiration is none", mem(alice, "x"), mem(bob, "y", nostr.Tag{"expiration", "soon"}), true},
		{"the first expiration counts", mem(alice, "x", nostr.Tag{"expiration", "5"}, nostr.Tag{"expiration", "9"}), mem(alice, "y", nostr.Tag{"expiration", "5"}), true},
		{"two expirations", mem(alice, "x", nostr.Tag{"expiration", "5"}), mem(alice, "y", nostr.Tag{"expiration", "9"}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sa, sb := scopeOf(tc.a, false), scopeOf(tc.b, false)
			if (sa == sb) != tc.same {
				t.Fatalf("scopes %q and %q: same = %v, want %v", sa, sb, sa == sb, tc.same)
			}
		})
	}
	if scopeOf(mem(alice, "x"), true) == publicScope {
		t.Fatal("a volatile (decrypted) doc shares the public scope")
	}
}
