package dynconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// Keys of a config event, in its JSON content and as tags.
const (
	KeyRespondMode    = "respond_mode"
	KeyContextHistory = "context_history"
)

// Patch is what one scope sets. A zero field is unset and falls through to
// the next level in Resolve. Its JSON is the config event's content, keys
// as Settings spells them: only the keys that are set.
type Patch struct {
	RespondMode    RespondMode `json:"respond_mode,omitempty"`
	ContextHistory int         `json:"context_history,omitempty"`
}

// IsZero reports whether the patch sets nothing.
func (p Patch) IsZero() bool { return p == Patch{} }

// Validate reports the first field that holds a value no event could carry,
// e.g. from a config file.
func (p Patch) Validate() error {
	if p.RespondMode != "" && !p.RespondMode.Valid() {
		return fmt.Errorf("respond_mode %q is not one of all, mention, owner, none", p.RespondMode)
	}
	if p.ContextHistory != 0 {
		return checkContextHistory(p.ContextHistory)
	}
	return nil
}

// ParsePatch reads a config event: its scope from the d tag and the patch
// from the JSON content and from tags named like the keys, which override
// the content. Unknown keys are ignored so that newer clients can add
// fields; a bad value is an error, since silently dropping it would leave
// the owner believing the setting took effect. An event with no content and
// no key tags is an empty patch, which clears the scope.
func ParsePatch(evt *nostr.Event) (Scope, Patch, error) {
	if evt == nil {
		return Scope{}, Patch{}, fmt.Errorf("no event")
	}
	if evt.Kind != snowclaw.KindAppData {
		return Scope{}, Patch{}, fmt.Errorf("config event has kind %d, want %d", evt.Kind, snowclaw.KindAppData)
	}
	scope, err := ScopeOfD(evt.Tags.GetD())
	if err != nil {
		return Scope{}, Patch{}, err
	}
	var p Patch
	if content := strings.TrimSpace(evt.Content); content != "" {
		if p, err = parseContent(content); err != nil {
			return scope, Patch{}, err
		}
	}
	for _, tag := range evt.Tags {
		if len(tag) < 2 {
			continue
		}
		if err := p.set(tag[0], tag[1]); err != nil {
			return scope, Patch{}, fmt.Errorf("tag %s: %w", tag[0], err)
		}
	}
	return scope, p, nil
}

func parseContent(content string) (Patch, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(content), &raw); err != nil {
		return Patch{}, fmt.Errorf("content is not a JSON object: %w", err)
	}
	var p Patch
	for key, v := range raw {
		if bytes.Equal(v, []byte("null")) {
			continue
		}
		var value string
		switch key {
		case KeyRespondMode:
			if err := json.Unmarshal(v, &value); err != nil {
				return Patch{}, fmt.Errorf("respond_mode must be a string, got %s", v)
			}
		case KeyContextHistory:
			// A number, or a string holding one, as tags must carry it.
			if err := json.Unmarshal(v, &value); err != nil {
				value = string(v)
			}
		default:
			continue
		}
		if err := p.set(key, value); err != nil {
			return Patch{}, err
		}
	}
	return p, nil
}

// set applies one key; unknown keys are ignored.
func (p *Patch) set(key, value string) error {
	switch key {
	case KeyRespondMode:
		m, err := ParseRespondMode(value)
		if err != nil {
			return err
		}
		p.RespondMode = m
	case KeyContextHistory:
		n, err := strconv.Atoi(strings.TrimSpace(value))
		if err != nil {
			return fmt.Errorf("context_history %q is not a whole number", value)
		}
		if err := checkContextHistory(n); err != nil {
			return err
		}
		p.ContextHistory = n
	}
	return nil
}

// Event builds the unsigned config event that sets this patch on a scope.
// A group scope also gets the group's h tag (docs/events.md#dynamic-config), so the
// relay scopes it like other group data.
func (p Patch) Event(s Scope, now nostr.Timestamp) nostr.Event {
	tags := nostr.Tags{{"d", s.DTag()}}
	if s.Kind == Group {
		tags = append(tags, nostr.Tag{"h", s.ID})
	}
	// Marshalling two plain fields cannot fail.
	body, _ := json.Marshal(p)
	return nostr.Event{
		Kind:      snowclaw.KindAppData,
		CreatedAt: now,
		Tags:      tags,
		Content:   string(body),
	}
}

// ParseAssignments reads CLI arguments such as "respond_mode=all" and
// "context_history=30". Unlike events, unknown keys are errors here: a typo
// on the command line should be reported, not published.
func ParseAssignments(args []string) (Patch, error) {
	var p Patch
	for _, arg := range args {
		key, value, ok := strings.Cut(arg, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return Patch{}, fmt.Errorf("%q: want key=value", arg)
		}
		if key != KeyRespondMode && key != KeyContextHistory {
			return Patch{}, fmt.Errorf("unknown config key %q: want %s or %s", key, KeyRespondMode, KeyContextHistory)
		}
		if err := p.set(key, value); err != nil {
			return Patch{}, err
		}
	}
	return p, nil
}
