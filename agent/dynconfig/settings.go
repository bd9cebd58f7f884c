package dynconfig

import (
	"fmt"
	"strings"
)

// RespondMode says which messages the agent answers.
type RespondMode string

// Respond modes (docs/agent.md#respond-modes).
const (
	All     RespondMode = "all"     // every message
	Mention RespondMode = "mention" // messages that mention or reply to the agent
	Owner   RespondMode = "owner"   // messages from the owner only
	None    RespondMode = "none"    // listen and remember, never answer
)

// ParseRespondMode accepts a mode name in any case, with surrounding spaces.
func ParseRespondMode(s string) (RespondMode, error) {
	m := RespondMode(strings.ToLower(strings.TrimSpace(s)))
	switch m {
	case All, Mention, Owner, None:
		return m, nil
	}
	return "", fmt.Errorf("respond_mode %q is not one of all, mention, owner, none", s)
}

// Valid reports whether m is one of the four modes.
func (m RespondMode) Valid() bool {
	switch m {
	case All, Mention, Owner, None:
		return true
	}
	return false
}

// Bounds of context_history. A ring buffer larger than a thousand messages
// would not fit any model's context anyway.
const (
	MinContextHistory = 1
	MaxContextHistory = 1000
)

func checkContextHistory(n int) error {
	if n < MinContextHistory || n > MaxContextHistory {
		return fmt.Errorf("context_history %d is out of range %d..%d", n, MinContextHistory, MaxContextHistory)
	}
	return nil
}

// Settings are the effective values for one message: every field is set.
// Its JSON keys are the ones `snowclaw config set` and the config events
// take, so what `config get` prints can be set back as it reads.
type Settings struct {
	RespondMode    RespondMode `json:"respond_mode"`
	ContextHistory int         `json:"context_history"`
}

// The built-in defaults live in constants so that Resolve does not depend on
// the exported Defaults variable, which anyone could overwrite.
const (
	defaultRespondMode    = Mention
	defaultContextHistory = 20
)

// Defaults are the values used when neither dynamic config nor the config
// file sets a field. Changing this variable changes nothing: it is a copy.
var Defaults = Settings{RespondMode: defaultRespondMode, ContextHistory: defaultContextHistory}
