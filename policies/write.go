package policies

import (
	"context"

	"github.com/snowclaw/snowclaw"
)

// WriteRules are the write rules of docs/events.md, docs/access.md that depend on who the
// author is: namespaces, tiers, relay-signed kinds and group membership.
// NIP-29 moderation and join/leave requests are judged by the groups
// plugin, which knows roles and invite codes.
type WriteRules struct {
	IDs    Identities
	Groups GroupView
}

// RejectEvent is Check as a relay hook.
func (w *WriteRules) RejectEvent(_ context.Context, evt *snowclaw.Event) error { return w.Check(evt) }

// Check returns why evt must be refused, or nil.
func (w *WriteRules) Check(evt *snowclaw.Event) error {
	author := evt.PubKey
	// first, for every kind and every author (the relay's and the agent's
	// own events too): readers match #h against any h tag, so an event
	// naming two groups would be judged by one and delivered to both
	if evt.GroupErr != nil {
		return snowclaw.Invalid("%s", evt.GroupErr.Error())
	}
	g := evt.Group
	if snowclaw.IsGroupMetadataKind(evt.Kind) && author != w.IDs.Relay {
		return snowclaw.Restricted("group metadata (kinds 39000-39005) is signed by the relay itself; send moderation events (9000-9010) instead")
	}
	if err := w.checkAppData(evt); err != nil {
		return err
	}
	if snowclaw.IsGroupStateKind(evt.Kind) {
		return nil // the groups plugin decides
	}
	if g != "" && !w.IDs.IsSystem(author) && !w.Groups.IsMember(g, author) {
		if !seesGroup(w.Groups, w.IDs, g, author) {
			return UnseenGroup(g, author)
		}
		// NIP-29: without "restricted" "anyone can send messages to
		// the group", but someone a moderator removed is not anyone
		if info, ok := w.Groups.GroupInfo(g); ok && !info.Restricted {
			if b, ok := w.Groups.(Bans); ok && b.Banned(g, author) {
				return snowclaw.Restricted("a moderator removed you from group %s; only a moderator can let you post again (put-user)", g)
			}
			return nil
		}
		return snowclaw.Restricted("you are not a member of group %s; send a join request (kind 9021) first", g)
	}
	return nil
}

func (w *WriteRules) checkAppData(evt *snowclaw.Event) error {
	author := evt.PubKey
	// a group seal is judged by its shape here, whatever its kind, and by
	// its key (version current, content opens) in plugins/groupcrypt
	if evt.MentionsGroupSeal {
		if _, _, err := snowclaw.GroupSealOf(evt); err != nil {
			return snowclaw.Invalid("%s", err.Error())
		}
	}
	switch evt.Namespace {
	case snowclaw.NamespaceConfig:
		if w.IDs.Owner == "" {
			return snowclaw.Restricted("this relay has no owner configured, so config events are refused from everyone")
		}
		if author != w.IDs.Owner {
			return snowclaw.Restricted("snowclaw:config:* events are accepted from the relay owner only")
		}
	case snowclaw.NamespaceMemoryNpub, snowclaw.NamespaceMemoryGroup, snowclaw.NamespaceMemoryOther, snowclaw.NamespaceGroupKey:
		if author != w.IDs.Agent {
			return snowclaw.Restricted("snowclaw:memory:* records are written by the relay's agent only; use snow:memory:<topic> for your own memories")
		}
	case snowclaw.NamespaceMemoryItem:
		switch evt.Tier {
		case snowclaw.TierPrivate:
			// the same rule every reader applies (snowclaw.Event.Person),
			// so nothing is stored that would be shown as someone else's
			if _, ok := evt.Person(w.IDs.Agent); !ok {
				return snowclaw.Restricted("a private memory names exactly one person (its p tag, 64 lowercase hex) and is written by the agent or by that person")
			}
		case snowclaw.TierInternal:
			if author != w.IDs.Agent {
				return snowclaw.Restricted("internal memories (encrypted, no p tag) are written by the agent only")
			}
		}
	}
	return nil
}
