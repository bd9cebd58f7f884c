package snowclaw

import (
	"encoding/json"
	"strings"

	"github.com/nbd-wtf/go-nostr"
)

// Profile is the part of a kind 0 (NIP-01 metadata) the relay and the
// agent read: who someone says they are.
type Profile struct {
	Name        string `json:"name"`
	DisplayName string `json:"display_name"`
	About       string `json:"about"`
}

// ProfileOf reads a kind 0's JSON content; an error when it is not JSON.
func ProfileOf(evt *nostr.Event) (Profile, error) {
	var p Profile
	err := json.Unmarshal([]byte(evt.Content), &p)
	return p, err
}

// Shown is the name to show: the display name, else the name, trimmed.
func (p Profile) Shown() string {
	if s := strings.TrimSpace(p.DisplayName); s != "" {
		return s
	}
	return strings.TrimSpace(p.Name)
}
