package snowclaw

import (
	"errors"
	"fmt"

	"github.com/nbd-wtf/go-nostr"
)

// Errors of ParseGroup. An event belongs to at most one group, and a group
// tag names it: anything else is refused on write, because readers match
// `#h` filters against every h tag while the rules can judge only one.
var (
	ErrMultipleGroups = errors.New("more than one h tag")
	ErrEmptyGroup     = errors.New("an h tag without a group id")
)

// MalformedGroup is what GroupOf returns for an event ParseGroup refuses.
// No group can have this id (group ids are letters, digits, - and _), so
// nobody is ever a member of it.
const MalformedGroup = "!malformed-h"

// ParseGroup is the one reading of an event's group: the value of its only
// h tag, or "" when it has none. Several h tags (["h","A"],["h","B"]) or an
// h tag with no or an empty value (["h"], ["h",""]) are errors wrapping
// ErrMultipleGroups or ErrEmptyGroup.
func ParseGroup(evt *nostr.Event) (string, error) {
	var h nostr.Tag
	n := 0
	for _, t := range evt.Tags {
		if len(t) > 0 && t[0] == "h" {
			h, n = t, n+1
		}
	}
	switch {
	case n == 0:
		return "", nil
	case n > 1:
		return "", fmt.Errorf("%w (%d): an event belongs to one group at most", ErrMultipleGroups, n)
	case len(h) < 2 || h[1] == "":
		return "", fmt.Errorf("%w: name the group or leave the tag out", ErrEmptyGroup)
	}
	return h[1], nil
}

// GroupOf is ParseGroup for readers of stored events: the group, "" for
// none, and MalformedGroup for an event ParseGroup refuses (such events
// can only have been stored before the parser existed). Every rule that
// scopes by GroupOf therefore treats a malformed event as belonging to a
// group nobody is a member of: never public, never in the group its first
// (or any) h tag names. policies.Visibility refuses them outright to all
// but their author, the owner and the relay's own keys.
func GroupOf(evt *nostr.Event) string {
	g, err := ParseGroup(evt)
	if err != nil {
		return MalformedGroup
	}
	return g
}

// NamesGroup reports whether any h tag of evt names g. It is for clean-up
// only (moderators deleting events, deleting a group): a malformed event
// stored before ParseGroup existed can then be removed by the moderators
// of every group it names, while no read rule places it in any of them.
func NamesGroup(evt *nostr.Event, g string) bool {
	for _, t := range evt.Tags {
		if g != "" && len(t) >= 2 && t[0] == "h" && t[1] == g {
			return true
		}
	}
	return false
}
