package snowclaw_test

import (
	"errors"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

func TestParseGroup(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tags    nostr.Tags
		want    string
		err     error
		groupOf string
	}{
		{"no tags", nil, "", nil, ""},
		{"no h tag", nostr.Tags{{"p", "x"}, {"e", "y"}}, "", nil, ""},
		{"one group", nostr.Tags{{"h", "B"}}, "B", nil, "B"},
		{"relay hint after the id", nostr.Tags{{"h", "B", "wss://x"}}, "B", nil, "B"},
		{"other single-letter tags do not count", nostr.Tags{{"H", "A"}, {"h", "B"}}, "B", nil, "B"},
		{"empty then B", nostr.Tags{{"h", ""}, {"h", "B"}}, "", snowclaw.ErrMultipleGroups, snowclaw.MalformedGroup},
		{"A then B", nostr.Tags{{"h", "A"}, {"h", "B"}}, "", snowclaw.ErrMultipleGroups, snowclaw.MalformedGroup},
		{"B twice", nostr.Tags{{"h", "B"}, {"h", "B"}}, "", snowclaw.ErrMultipleGroups, snowclaw.MalformedGroup},
		{"valueless then B", nostr.Tags{{"h"}, {"h", "B"}}, "", snowclaw.ErrMultipleGroups, snowclaw.MalformedGroup},
		{"only empty", nostr.Tags{{"h", ""}}, "", snowclaw.ErrEmptyGroup, snowclaw.MalformedGroup},
		{"only valueless", nostr.Tags{{"h"}}, "", snowclaw.ErrEmptyGroup, snowclaw.MalformedGroup},
		{"empty tag arrays are ignored", nostr.Tags{{}, {"h", "B"}, {}}, "B", nil, "B"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evt := &nostr.Event{Tags: tc.tags}
			got, err := snowclaw.ParseGroup(evt)
			if got != tc.want || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("ParseGroup(%v) = %q, %v; want %q, %v", tc.tags, got, err, tc.want, tc.err)
			}
			if g := snowclaw.GroupOf(evt); g != tc.groupOf {
				t.Fatalf("GroupOf(%v) = %q, want %q", tc.tags, g, tc.groupOf)
			}
		})
	}
}

func TestNamesGroup(t *testing.T) {
	evt := &nostr.Event{Tags: nostr.Tags{{"h", ""}, {"h", "A"}, {"h"}, {"h", "B"}}}
	for g, want := range map[string]bool{"A": true, "B": true, "C": false, "": false} {
		if got := snowclaw.NamesGroup(evt, g); got != want {
			t.Errorf("NamesGroup(%q) = %v, want %v", g, got, want)
		}
	}
}
