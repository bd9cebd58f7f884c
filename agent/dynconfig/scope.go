package dynconfig

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/snowclaw/snowclaw"
)

// ScopeKind is the level a config patch applies to.
type ScopeKind int

// Scope kinds, from the widest to the narrowest.
const (
	Global ScopeKind = iota
	Group
	Npub
)

func (k ScopeKind) String() string {
	switch k {
	case Global:
		return "global"
	case Group:
		return "group"
	case Npub:
		return "npub"
	}
	return fmt.Sprintf("ScopeKind(%d)", int(k))
}

// Scope names where a patch applies. For Group, ID is the group id. For
// Npub, ID is the lowercase hex pubkey, or, for a legacy d tag that carries
// only the 32-char hex prefix of a key, that prefix: it cannot be turned back
// into a full key, so Resolve matches it by prefix.
type Scope struct {
	Kind ScopeKind
	ID   string
}

// ParseScope reads a scope as people type it: "global", "group:<id>",
// "npub:<npub1… or hex>", a bare npub or hex key, or a whole config d tag.
func ParseScope(s string) (Scope, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, snowclaw.PrefixConfig) {
		return ScopeOfD(s)
	}
	kind, id, hasColon := strings.Cut(s, ":")
	switch {
	case s == "":
		return Scope{}, fmt.Errorf("empty scope: want global, group:<id> or npub:<npub>")
	case s == "global":
		return Scope{Kind: Global}, nil
	case !hasColon && (strings.HasPrefix(s, "npub1") || len(s) == 64):
		return npubScope(s)
	case kind == "group":
		return groupScope(id)
	case kind == "npub":
		return npubScope(id)
	}
	return Scope{}, fmt.Errorf("scope %q: want global, group:<id> or npub:<npub>", s)
}

// ScopeOfD reads the scope from a config d tag. Besides the canonical npub
// form it accepts the legacy 64-char hex and 32-char hex prefix forms
// (docs/events.md).
func ScopeOfD(d string) (Scope, error) {
	ns, rest := snowclaw.ClassifyD(d)
	if ns != snowclaw.NamespaceConfig {
		return Scope{}, fmt.Errorf("d tag %q is not in the %s namespace", d, snowclaw.PrefixConfig)
	}
	kind, id, _ := strings.Cut(rest, ":")
	switch {
	case rest == "global":
		return Scope{Kind: Global}, nil
	case kind == "group":
		return groupScope(id)
	case kind == "npub":
		return npubScope(id)
	}
	return Scope{}, fmt.Errorf("d tag %q: unknown config scope %q", d, rest)
}

func groupScope(id string) (Scope, error) {
	if id == "" {
		return Scope{}, fmt.Errorf("group scope without a group id")
	}
	if strings.ContainsFunc(id, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return Scope{}, fmt.Errorf("group id %q contains spaces or control characters", id)
	}
	return Scope{Kind: Group, ID: id}, nil
}

func npubScope(id string) (Scope, error) {
	if len(id) == 32 {
		if _, err := hex.DecodeString(id); err == nil {
			return Scope{Kind: Npub, ID: strings.ToLower(id)}, nil
		}
	}
	pk, err := snowclaw.ParsePubkey(id)
	if err != nil {
		return Scope{}, fmt.Errorf("npub scope: %w", err)
	}
	return Scope{Kind: Npub, ID: pk}, nil
}

// String is the CLI spelling, which ParseScope reads back.
func (s Scope) String() string {
	switch s.Kind {
	case Global:
		return "global"
	case Group:
		return "group:" + s.ID
	case Npub:
		return "npub:" + s.npubForm()
	}
	return s.Kind.String() + ":" + s.ID
}

// DTag is the d tag of the config event for this scope; npub scopes are
// written with the bech32 npub
// (docs/events.md#d-tag-namespaces-of-kind-30078).
func (s Scope) DTag() string {
	switch s.Kind {
	case Group:
		return snowclaw.PrefixConfigGroup + s.ID
	case Npub:
		return snowclaw.PrefixConfigNpub + s.npubForm()
	}
	return snowclaw.DTagConfigGlobal
}

// npubForm is the bech32 npub for a full key; a legacy prefix stays hex.
func (s Scope) npubForm() string {
	if len(s.ID) == 64 {
		return snowclaw.NpubOf(s.ID)
	}
	return s.ID
}
