package groups

import (
	"context"
	"slices"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/policies"
)

// maxPins is how many events a group may pin (NIP-29: "The relay may
// choose to limit the number of pins"): enough for a channel's notices,
// and a 39005 far below any event size limit.
const maxPins = 50

// checkEdit judges a 9002 by an admin of g, or a 9007 (g nil, gid the
// group to be): its fields must read, and a parent and children must
// follow NIP-29's subgroup rules (s.mu held).
func (s *Groups) checkEdit(evt *snowclaw.Event, gid string, g *Group) error {
	edit, err := snowclaw.ReadGroupEdit(evt.Tags)
	if err != nil {
		return snowclaw.Invalid("%s", err.Error())
	}
	if edit.Encrypted != nil && !*edit.Encrypted && s.forcedEncrypted(gid) {
		return snowclaw.Restricted("group %s is encrypted by the relay's configuration; only its owner can change that", gid)
	}
	if p := edit.Parent; p != "" {
		parent := s.groups[p]
		switch {
		case parent == nil || !s.seen(parent, evt.PubKey):
			return snowclaw.Invalid("parent group %s does not exist on this relay", p)
		case p == gid || s.ancestors(p, gid):
			return snowclaw.Invalid("group %s cannot be its own ancestor: %s is %s or below it", gid, p, gid)
		}
		if admin, _ := s.powers(parent, evt.PubKey); !admin {
			return snowclaw.Restricted("only an admin of group %s may make it the parent of another", p)
		}
	}
	var children []string
	if g != nil && edit.StatesTree {
		children = s.children(gid)
	}
	if edit.StatesTree && !sameSet(children, edit.Children) {
		if len(children) == 0 {
			return snowclaw.Invalid("group %s has no child groups; a group becomes a child by naming its parent in a parent tag", gid)
		}
		return snowclaw.Invalid("group %s has child groups %s: an edit lists every one as a child tag, in the order wanted (NIP-29)", gid, strings.Join(children, ", "))
	}
	return nil
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// checkPins judges an update-pin-list (9010): at most maxPins e tags
// (64-hex ids of this group's events the sender may read) and a tags
// (kind:pubkey:d addresses); no list at all clears the pins.
func (s *Groups) checkPins(ctx context.Context, evt *snowclaw.Event, g *Group) error {
	pins := pinTags(evt.Tags)
	if len(pins) > maxPins {
		return snowclaw.Invalid("a group pins %d events at most; this list has %d", maxPins, len(pins))
	}
	var ids []string
	for _, t := range pins {
		switch t[0] {
		case "e":
			if !nostr.IsValid32ByteHex(t[1]) {
				return snowclaw.Invalid("pinned event id %q is not 64 lowercase hex", t[1])
			}
			ids = append(ids, t[1])
		case "a":
			if _, _, _, err := snowclaw.ParseAddress(t[1]); err != nil {
				return snowclaw.Invalid("pinned address %q: %v", t[1], err)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	ch, err := s.opts.Store.QueryEvents(ctx, nostr.Filter{IDs: ids, Limit: len(ids)})
	if err != nil {
		return snowclaw.Internal("could not look up the events to pin; try again in a few seconds")
	}
	found := make(map[string]bool, len(ids))
	vis := policies.Visibility{IDs: s.opts.IDs, Groups: held{s}}
	hearer := policies.Hearer(ctx, evt.PubKey)
	for target := range ch {
		t := snowclaw.ReadEvent(target)
		if ok, _ := vis.CanRead(hearer, t); ok && t.Group == g.ID {
			found[target.ID] = true
		}
	}
	for _, id := range ids {
		if !found[id] {
			return snowclaw.Invalid("event %s is not in group %s", id, g.ID)
		}
	}
	return nil
}
