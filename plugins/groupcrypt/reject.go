package groupcrypt

import (
	"context"

	"github.com/snowclaw/snowclaw"
)

// RejectEvent is the group tier's write rule, after the write rules (which
// refuse a malformed seal and non-members):
//
//   - a group-sealed memory must use the group's current key and open
//     with it: a member who kept an old key cannot write what a departed
//     member could read, and nothing is stored that no member can open;
//   - a group memory in plain to an encrypted group is refused, so the
//     group's memories never rest on disk readable.
//
// Both count for the agent too: WrapAgent seals its writes before they
// get here.
func (p *Plugin) RejectEvent(_ context.Context, evt *snowclaw.Event) error {
	if evt.Kind != snowclaw.KindAppData {
		return nil
	}
	if evt.MentionsGroupSeal {
		g, v, err := snowclaw.GroupSealOf(evt)
		if err != nil {
			return snowclaw.Invalid("%s", err.Error())
		}
		cur, ok := p.Current(g)
		if !ok {
			return snowclaw.Restricted("group %s has no group key on this relay; an admin switches its encryption on first", g)
		}
		if v != cur.Version {
			return snowclaw.Invalid("group %s's current key is version %d, not %d; seal new memories with the newest key the agent sent you", g, cur.Version, v)
		}
		if _, err := snowclaw.OpenGroupContent(evt.Content, cur); err != nil {
			return snowclaw.Invalid("content does not open with group %s's key version %d", g, cur.Version)
		}
		return nil
	}
	if !p.sealable(evt) {
		return nil
	}
	return snowclaw.Restricted(`group %s keeps its memories encrypted: seal them with its group key (["encrypted","nip44-group"], docs/group-encryption.md)`, evt.Group)
}

// sealable reports whether evt is a group memory in plain whose group is
// encrypted: a snow:memory: item or the agent's record of the group.
func (p *Plugin) sealable(evt *snowclaw.Event) bool {
	if evt.Kind != snowclaw.KindAppData || evt.Encrypted {
		return false
	}
	g, ns := evt.Group, evt.Namespace
	if g == "" || ns != snowclaw.NamespaceMemoryItem && ns != snowclaw.NamespaceMemoryGroup {
		return false
	}
	info, ok := p.o.Groups.GroupInfo(g)
	return ok && info.Encrypted
}
