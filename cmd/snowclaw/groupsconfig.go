package main

import (
	"regexp"
	"time"

	"github.com/snowclaw/snowclaw"
)

// GroupsConfig is [groups]: NIP-29 groups' creators and defaults, and the
// groups the owner keeps encrypted (docs/group-encryption.md).
type GroupsConfig struct {
	Creators       []string `toml:"creators"`
	DefaultPrivate bool     `toml:"default_private"`
	DefaultClosed  bool     `toml:"default_closed"`
	DefaultHidden  bool     `toml:"default_hidden"`
	// MaxEventAge: group events older than this are refused (NIP-29
	// late publication) unless AcceptMoved.
	MaxEventAge Duration `toml:"max_event_age"`
	// MaxModerationAge is MaxEventAge's older name, from when the rule
	// covered moderation events only; when set it is used.
	MaxModerationAge Duration `toml:"max_moderation_age"`
	// AcceptMoved lifts the age limit so a group's history can be
	// copied in from another relay (a moved or forked group).
	AcceptMoved bool     `toml:"accept_moved"`
	Encrypted   []string `toml:"encrypted"`
}

// eventAge is the late-publication limit: the older name's when set.
func (g *GroupsConfig) eventAge() time.Duration {
	if g.MaxModerationAge.Duration != 0 {
		return g.MaxModerationAge.Duration
	}
	return g.MaxEventAge.Duration
}

// groupIDPattern is NIP-29's group id as plugins/groups accepts it.
var groupIDPattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// validate checks [groups] and turns the creators into hex keys.
func (g *GroupsConfig) validate(bad func(key, format string, a ...any)) {
	for i, cr := range g.Creators {
		pk, err := snowclaw.ParsePubkey(cr)
		if err != nil {
			bad("groups.creators", "%v", err)
			continue
		}
		g.Creators[i] = pk
	}
	for _, id := range g.Encrypted {
		if !groupIDPattern.MatchString(id) {
			bad("groups.encrypted", "%q is not a group id (letters, digits, - and _, at most 64)", id)
		}
	}
}
