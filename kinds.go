// Package snowclaw holds the event schema every other package of the project
// shares: kinds, the d-tag namespaces of kind 30078, memory tiers, and the
// one reading of them off a nostr.Event (ReadEvent, whose Event every hook
// and rule takes). It imports go-nostr and nothing of the project, so
// policies, search and the agent agree on one reading of an event.
package snowclaw

// Event kinds the relay gives meaning to (docs/events.md).
const (
	KindProfile       = 0
	KindDeletion      = 5
	KindChat          = 9
	KindGiftWrap      = 1059
	KindLegacyDM      = 4
	KindAppData       = 30078 // NIP-78: memories and config
	KindPutUser       = 9000
	KindRemoveUser    = 9001
	KindEditMetadata  = 9002
	KindDeleteEvent   = 9005
	KindCreateGroup   = 9007
	KindDeleteGroup   = 9008
	KindCreateInvite  = 9009
	KindUpdatePins    = 9010
	KindJoinRequest   = 9021
	KindLeaveRequest  = 9022
	KindGroupMetadata = 39000
	KindGroupAdmins   = 39001
	KindGroupMembers  = 39002
	KindGroupRoles    = 39003
	KindGroupPins     = 39005
)

// IsModerationKind reports whether k is a NIP-29 moderation action
// (9000–9020), which only group admins or the relay may send.
func IsModerationKind(k int) bool { return k >= 9000 && k <= 9020 }

// IsGroupMetadataKind reports whether k is one of the relay-signed group
// state events (39000–39005: metadata, admins, members, roles, LiveKit
// participants, pins), which NIP-29 lets no one else sign.
func IsGroupMetadataKind(k int) bool { return k >= 39000 && k <= 39005 }

// GroupStateKinds are the kinds IsGroupStateKind accepts, for filters.
var GroupStateKinds = func() []int {
	var out []int
	for k := KindPutUser; k <= KindLeaveRequest; k++ {
		if IsGroupStateKind(k) {
			out = append(out, k)
		}
	}
	return out
}()

// IsGroupStateKind reports whether events of kind k change group state and
// so must stay in the store for the state to be rebuilt on restart.
func IsGroupStateKind(k int) bool {
	return IsModerationKind(k) || k == KindJoinRequest || k == KindLeaveRequest
}

// IsDecisiveKind reports whether storing an event of kind k can change
// what the write rules decide for an event of another kind: NIP-29 group
// state (membership, roles, a group's flags and existence) and NIP-09
// deletions. Instances sharing a store decide a save of any other
// regular kind at once, without first reading the change log, and prove
// afterwards that no other instance stored an event of these kinds, or
// deleted one, in between (docs/scaling.md). A write rule that comes to
// read state derived from events of another kind must add it here.
func IsDecisiveKind(k int) bool { return IsGroupStateKind(k) || k == KindDeletion }

// DecisiveKinds are the kinds IsDecisiveKind accepts, for a store's
// queries.
var DecisiveKinds = append([]int{KindDeletion}, GroupStateKinds...)
