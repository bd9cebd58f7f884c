package snowclaw_test

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

func TestLearntFrom(t *testing.T) {
	alice, bob := strings.Repeat("a1", 32), strings.Repeat("b2", 32)
	for _, tc := range []struct {
		name string
		tags nostr.Tags
		want string
	}{
		{"none", nil, ""},
		{"hex", nostr.Tags{{"snow:learnt-from", alice}}, alice},
		{"upper hex is read as lower", nostr.Tags{{"snow:learnt-from", strings.ToUpper(alice)}}, alice},
		{"npub", nostr.Tags{{"snow:learnt-from", snowclaw.NpubOf(bob)}}, bob},
		{"not a key", nostr.Tags{{"snow:learnt-from", "alice"}}, ""},
		{"empty value", nostr.Tags{{"snow:learnt-from"}}, ""},
		{"same person twice", nostr.Tags{{"snow:learnt-from", alice}, {"snow:learnt-from", snowclaw.NpubOf(alice)}}, alice},
		{"two people: unknown", nostr.Tags{{"snow:learnt-from", alice}, {"snow:learnt-from", bob}}, ""},
		{"a bad one spoils it", nostr.Tags{{"snow:learnt-from", alice}, {"snow:learnt-from", "x"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := snowclaw.LearntFrom(&nostr.Event{Tags: tc.tags}); got != tc.want {
				t.Fatalf("LearntFrom = %q, want %q", got, tc.want)
			}
		})
	}
}
