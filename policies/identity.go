package policies

// Identities are the keys the rules treat specially, all as lowercase hex.
// Owner may be empty: then config events are refused from everyone.
type Identities struct {
	Owner string // the human who owns this relay and its agent
	Relay string // signs NIP-29 group metadata (NIP-11 "self")
	Agent string // the resident agent; sole writer of snowclaw:memory:*
}

// IsSystem reports whether pk is one of the relay's own keys. They see
// everything: the relay key signs group state and the agent lives in the
// same process and already sees every event through the hooks.
func (id Identities) IsSystem(pk string) bool {
	return pk != "" && (pk == id.Relay || pk == id.Agent)
}

// GroupInfo is what the read and write rules need to know of a NIP-29 group.
type GroupInfo struct {
	Private    bool // only members read
	Restricted bool // only members write (a group is, until an admin's edit says otherwise)
	Hidden     bool // metadata hidden from non-members
	Closed     bool // join requests need an invite code
	// Encrypted: the group's memories are sealed with its group key
	// (plugins/groupcrypt, docs/group-encryption.md)
	Encrypted bool
}

// Bans is what a GroupView may also know: whom a moderator removed from a
// group and no moderator brought back. An unrestricted group takes
// anyone's post but theirs.
type Bans interface {
	Banned(group, pubkey string) bool
}

// GroupView is the read-only view of group state the policies consult. The
// NIP-29 plugin implements it.
type GroupView interface {
	GroupInfo(id string) (GroupInfo, bool)
	IsMember(group, pubkey string) bool
	// Moderates reports whether pubkey holds moderation powers in group
	// (admin or moderator role, the owner, the relay's keys): those who
	// may create its invite codes, and so read them.
	Moderates(group, pubkey string) bool
}
