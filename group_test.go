package snowclaw_test

import (
	"errors"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// TestReadEvent_Group: the h rule, every shape of h tags.
func TestReadEvent_Group(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tags  nostr.Tags
		err   error
		group string
	}{
		{"no tags", nil, nil, ""},
		{"no h tag", nostr.Tags{{"p", "x"}, {"e", "y"}}, nil, ""},
		{"one group", nostr.Tags{{"h", "B"}}, nil, "B"},
		{"relay hint after the id", nostr.Tags{{"h", "B", "wss://x"}}, nil, "B"},
		{"other single-letter tags do not count", nostr.Tags{{"H", "A"}, {"h", "B"}}, nil, "B"},
		{"empty then B", nostr.Tags{{"h", ""}, {"h", "B"}}, snowclaw.ErrMultipleGroups, snowclaw.MalformedGroup},
		{"A then B", nostr.Tags{{"h", "A"}, {"h", "B"}}, snowclaw.ErrMultipleGroups, snowclaw.MalformedGroup},
		{"B twice", nostr.Tags{{"h", "B"}, {"h", "B"}}, snowclaw.ErrMultipleGroups, snowclaw.MalformedGroup},
		{"valueless then B", nostr.Tags{{"h"}, {"h", "B"}}, snowclaw.ErrMultipleGroups, snowclaw.MalformedGroup},
		{"only empty", nostr.Tags{{"h", ""}}, snowclaw.ErrEmptyGroup, snowclaw.MalformedGroup},
		{"only valueless", nostr.Tags{{"h"}}, snowclaw.ErrEmptyGroup, snowclaw.MalformedGroup},
		{"empty tag arrays are ignored", nostr.Tags{{}, {"h", "B"}, {}}, nil, "B"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := snowclaw.ReadEvent(&nostr.Event{Tags: tc.tags})
			if e.Group != tc.group || !errors.Is(e.GroupErr, tc.err) || (tc.err == nil) != (e.GroupErr == nil) {
				t.Fatalf("%v read as group %q, %v; want %q, %v", tc.tags, e.Group, e.GroupErr, tc.group, tc.err)
			}
		})
	}
}
