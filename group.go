package snowclaw

import (
	"errors"
	"fmt"
	"slices"
)

// Errors of an event's h tags (Event.GroupErr). An event belongs to at
// most one group, and a group tag names it: anything else is refused on
// write, because readers match `#h` filters against every h tag while the
// rules can judge only one.
var (
	ErrMultipleGroups = errors.New("more than one h tag")
	ErrEmptyGroup     = errors.New("an h tag without a group id")
)

// MalformedGroup is the Group of an event whose h tags are refused. No
// group can have this id (group ids are letters, digits, - and _), so
// nobody is ever a member of it.
const MalformedGroup = "!malformed-h"

// groupOf is the one reading of an event's group from the values of its
// h tags ("" for a valueless one), in order: the value of its only h tag,
// or "" when it has none. Several h tags (["h","A"],["h","B"]) or an h
// tag with no or an empty value (["h"], ["h",""]) are errors wrapping
// ErrMultipleGroups or ErrEmptyGroup.
//
// Such events can only be in the store from before the rule existed.
// Every rule that scopes by Event.Group treats them as belonging to a
// group nobody is a member of (MalformedGroup): never public, never in
// the group its first (or any) h tag names. policies.Visibility refuses
// them outright to all but their author, the owner and the relay's own
// keys.
func groupOf(hs []string) (string, error) {
	switch {
	case len(hs) == 0:
		return "", nil
	case len(hs) > 1:
		return "", fmt.Errorf("%w (%d): an event belongs to one group at most", ErrMultipleGroups, len(hs))
	case hs[0] == "":
		return "", fmt.Errorf("%w: name the group or leave the tag out", ErrEmptyGroup)
	}
	return hs[0], nil
}

// NamesGroup reports whether any h tag of the event names g. It is for
// clean-up only (moderators deleting events, deleting a group): a
// malformed event stored before the h rule existed can then be removed by
// the moderators of every group it names, while no read rule places it in
// any of them.
func (e *Event) NamesGroup(g string) bool {
	return g != "" && slices.Contains(e.hs, g)
}
