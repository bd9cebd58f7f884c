package snowclaw

import "github.com/nbd-wtf/go-nostr"

// GroupKeyStatus is an encrypted group's key state as the relay's owner
// and the group's admins see it (GET /api/v1/groups/{id}/keys): which
// version is current and which members it was delivered to. It carries no
// key material, not even a key's public half.
type GroupKeyStatus struct {
	Group string `json:"group"`
	// Encrypted: the mode is on. A group whose mode was switched off
	// keeps its keys (and its status) for the memories they sealed.
	Encrypted bool `json:"encrypted"`
	// Version is the current key version; 0 while no key is made yet.
	Version int `json:"version"`
	// Versions is how many versions exist (a removal or a leave makes one).
	Versions int `json:"versions"`
	// UpdatedAt is when the key record last changed: a rotation, a
	// delivery made or owed.
	UpdatedAt nostr.Timestamp `json:"updated_at,omitempty"`
	// Members are the group's current members, sorted by key; the
	// relay's own keys read through the relay and are not listed.
	Members []GroupKeyMember `json:"members"`
}

// The delivery states of GroupKeyMember.State.
const (
	// KeyDelivered: the member's gift wrap with the current version is
	// stored on the relay, for their client to fetch.
	KeyDelivered = "delivered"
	// KeyRetrying: a delivery to the member failed (or is under way); it
	// is sent again, with every version, until it is stored.
	KeyRetrying = "retrying"
	// KeyWaiting: the member is not yet among the current key's holders
	// (the relay has not caught up with a change of the group yet).
	KeyWaiting = "waiting"
)

// GroupKeyMember is one member's delivery of the current key version.
type GroupKeyMember struct {
	Pubkey string `json:"pubkey"` // hex
	State  string `json:"state"`  // KeyDelivered, KeyRetrying or KeyWaiting
}
