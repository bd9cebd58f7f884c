package policies

import (
	"fmt"

	"github.com/snowclaw/snowclaw"
)

// Visibility is the one read rule of docs/access.md. Every path that hands an
// event (or part of one) to a reader asks CanRead: stored REQ results, live
// broadcasts, COUNT, search, HTTP and exports.
type Visibility struct {
	IDs    Identities
	Groups GroupView
}

// CanRead reports whether reader (hex pubkey authenticated with NIP-42, or
// "" for an anonymous connection) may receive evt, and why not.
func (v *Visibility) CanRead(reader string, evt *snowclaw.Event) (bool, string) {
	// direct messages are decided before the system keys: not even the
	// agent receives a gift wrap addressed to someone else
	switch evt.Kind {
	case snowclaw.KindGiftWrap:
		if evt.Names(reader) {
			return true, ""
		}
		return false, "gift wraps are only served to their recipient"
	case snowclaw.KindLegacyDM:
		if reader != "" && (reader == evt.PubKey || evt.Names(reader)) {
			return true, ""
		}
		return false, "direct messages are only served to their sender and recipient"
	}
	if v.IDs.IsSystem(reader) {
		return true, ""
	}
	if namesScopedAddress(evt) {
		if reader != "" && (reader == evt.PubKey || reader == v.IDs.Owner) {
			return true, ""
		}
		return false, "deletions of snowclaw records name their private addresses; they are served to their author and the owner"
	}
	if evt.GroupErr != nil {
		// stored before writes were checked: it names no group it could
		// be shown in, so only those who see everything, and its author
		if reader != "" && (reader == evt.PubKey || reader == v.IDs.Owner) {
			return true, ""
		}
		return false, "events with malformed h tags are served to their author only"
	}
	if carriesInvite(evt) {
		g := evt.Group
		if reader != "" && (reader == evt.PubKey || v.Groups.Moderates(g, reader)) {
			return true, ""
		}
		return false, fmt.Sprintf("invite codes of group %s are readable by its moderators only", g)
	}

	if ok, why, decided := v.canReadAppData(reader, evt); decided {
		return ok, why
	}

	if g := evt.Group; g != "" {
		return v.canReadGroup(reader, evt, g)
	}
	if snowclaw.IsGroupMetadataKind(evt.Kind) {
		g := evt.D
		if info, ok := v.Groups.GroupInfo(g); ok && !MayKnowGroup(v.IDs, info, ok, v.Groups.IsMember(g, reader), reader) {
			return false, fmt.Sprintf("group %s is hidden from non-members", g)
		}
	}
	return true, ""
}

// canReadAppData applies the namespace and tier rules of kind 30078. decided
// is false when the event is ordinary app data and the generic rules apply.
func (v *Visibility) canReadAppData(reader string, evt *snowclaw.Event) (ok bool, why string, decided bool) {
	ns, subject := evt.Namespace, evt.Subject
	switch ns {
	case snowclaw.NamespaceConfig:
		if reader != "" && reader == v.IDs.Owner {
			return true, "", true
		}
		return false, "config is readable by the owner and the agent only", true
	case snowclaw.NamespaceGroupKey:
		// sealed to the agent itself; even its existence names a group
		if reader != "" && reader == v.IDs.Agent {
			return true, "", true
		}
		return false, "group keys are readable by the agent only", true
	case snowclaw.NamespaceMemoryNpub, snowclaw.NamespaceMemoryOther:
		if g := evt.Group; g != "" {
			return v.memberOnly(reader, evt, g)
		}
		if reader != "" && (reader == v.IDs.Owner || (ns == snowclaw.NamespaceMemoryNpub && snowclaw.NpubMatches(subject, reader))) {
			return true, "", true
		}
		return false, "the agent's record of a person is readable by that person, the owner and the agent", true
	case snowclaw.NamespaceMemoryGroup:
		g := evt.Group
		if g == "" {
			g = subject
		}
		return v.memberOnly(reader, evt, g)
	case snowclaw.NamespaceMemoryItem:
		switch evt.Tier {
		case snowclaw.TierPrivate:
			// whose it is comes from the signature (snowclaw.Event.Person),
			// never from a p tag alone: a forged one is its author's only
			if person, ok := evt.Person(v.IDs.Agent); reader != "" && (reader == evt.PubKey || ok && reader == person) {
				return true, "", true
			}
			return false, "private memories are readable by the agent and their user only", true
		case snowclaw.TierInternal:
			if reader != "" && reader == evt.PubKey {
				return true, "", true
			}
			return false, "internal memories are readable by the agent only", true
		case snowclaw.TierGroup:
			return v.memberOnly(reader, evt, evt.Group)
		}
	}
	return false, "", false
}

// memberOnly is the group-tier memory rule: members only, whatever the
// group's private flag says, because memories are not chat.
func (v *Visibility) memberOnly(reader string, evt *snowclaw.Event, g string) (bool, string, bool) {
	if reader != "" && (reader == evt.PubKey || v.Groups.IsMember(g, reader)) {
		return true, "", true
	}
	return false, fmt.Sprintf("group memories of %s are readable by its members only", g), true
}

// namesScopedAddress reports whether evt is a NIP-09 request naming a
// kind 30078 address in a snowclaw namespace. Such a d tag is as private
// as its event (a private item's topic names its person, a group item's
// its group, and ids hash the text), while the target, gone, can no
// longer say who may read it: so its author, the owner and the relay's
// keys only.
func namesScopedAddress(evt *snowclaw.Event) bool {
	if evt.Kind != snowclaw.KindDeletion {
		return false
	}
	for _, a := range snowclaw.TagValues(evt.Event, "a") {
		kind, _, d, err := snowclaw.ParseAddress(a)
		if err != nil || kind != snowclaw.KindAppData {
			continue
		}
		if ns, _ := snowclaw.ClassifyD(d); ns != snowclaw.NamespaceNone {
			return true
		}
	}
	return false
}

// carriesInvite reports whether evt holds a group's invite code: a
// create-invite, or a join request that presented one. Whoever reads it
// can join a closed group, so both are for the group's moderators.
func carriesInvite(evt *snowclaw.Event) bool {
	return evt.Kind == snowclaw.KindCreateInvite || (evt.Kind == snowclaw.KindJoinRequest && snowclaw.HasTag(evt.Event, "code"))
}

// canReadGroup: a hidden group is read like a private one, since serving
// its messages to anyone would show that it exists.
func (v *Visibility) canReadGroup(reader string, evt *snowclaw.Event, g string) (bool, string) {
	info, exists := v.Groups.GroupInfo(g)
	if exists && !info.Private && !info.Hidden {
		return true, ""
	}
	if reader != "" && (reader == evt.PubKey || v.Groups.IsMember(g, reader)) {
		return true, ""
	}
	return false, fmt.Sprintf("group %s is readable by its members only", g)
}
