package snowclaw_test

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

func TestEvent_Person(t *testing.T) {
	agent := strings.Repeat("a", 64)
	alice := strings.Repeat("1", 64)
	mallory := strings.Repeat("2", 64)
	enc := nostr.Tag{"encrypted", "nip44"}
	for _, tc := range []struct {
		name   string
		author string
		tags   nostr.Tags
		want   string
		ok     bool
	}{
		{"agent writes Alice's memory", agent, nostr.Tags{{"p", alice}, enc}, alice, true},
		{"Alice writes her own", alice, nostr.Tags{{"p", alice}, enc}, alice, true},
		{"Alice's p repeated", alice, nostr.Tags{{"p", alice}, {"p", alice}, enc}, alice, true},
		{"Mallory forges one for Alice", mallory, nostr.Tags{{"p", alice}, enc}, "", false},
		{"Mallory names herself too", mallory, nostr.Tags{{"p", alice}, {"p", mallory}, enc}, "", false},
		{"Mallory names herself first", mallory, nostr.Tags{{"p", mallory}, {"p", alice}, enc}, "", false},
		{"agent names two people", agent, nostr.Tags{{"p", alice}, {"p", mallory}, enc}, "", false},
		{"uppercase hex is not canonical", agent, nostr.Tags{{"p", strings.ToUpper(strings.Repeat("b", 64))}, enc}, "", false},
		{"npub form is not canonical", agent, nostr.Tags{{"p", snowclaw.NpubOf(alice)}, enc}, "", false},
		{"not encrypted", agent, nostr.Tags{{"p", alice}}, "", false},
		{"no p tag (internal)", agent, nostr.Tags{enc}, "", false},
		{"empty p", agent, nostr.Tags{{"p", ""}, enc}, "", false},
		{"a valueless p beside Alice's", agent, nostr.Tags{{"p"}, {"p", alice}, enc}, alice, true},
		{"a valueless marker still encrypts", agent, nostr.Tags{{"p", alice}, {"encrypted"}}, alice, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evt := &nostr.Event{PubKey: tc.author, Tags: tc.tags}
			got, ok := snowclaw.ReadEvent(evt).Person(agent)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("Person = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
	if _, ok := snowclaw.ReadEvent(&nostr.Event{PubKey: agent, Tags: nostr.Tags{{"p", alice}, enc}}).Person(""); ok {
		t.Fatal("with no agent key configured, an event signed by some key trusted as the agent")
	}
}
