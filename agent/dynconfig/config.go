package dynconfig

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// Reasons Apply leaves the config unchanged; test with errors.Is.
var (
	ErrNotOwner = errors.New("config event ignored: not signed by the owner")
	ErrStale    = errors.New("config event ignored: a newer one is already applied")
)

// Config is the dynamic config in memory: the newest patch per scope on top
// of the config file. It is safe for concurrent use; the turn path only
// takes a read lock.
type Config struct {
	file Patch

	mu     sync.RWMutex
	scopes map[Scope]applied
}

// applied remembers which event set a scope, so replays and out-of-order
// delivery (startup load racing live events) cannot roll a scope back.
type applied struct {
	patch Patch
	at    nostr.Timestamp
	id    string
}

// New returns a Config over the config file's values. Invalid file values
// are dropped so Resolve always returns usable settings; callers that want
// to report them check Patch.Validate first.
func New(file Patch) *Config {
	if !file.RespondMode.Valid() {
		file.RespondMode = ""
	}
	if checkContextHistory(file.ContextHistory) != nil {
		file.ContextHistory = 0
	}
	return &Config{file: file, scopes: make(map[Scope]applied)}
}

// Apply takes a config event into account and returns its scope. The relay
// has already checked the signature; Apply checks the author: only events
// from owner (hex) count. The newest event per scope wins, by created_at and
// then, as NIP-01 says for replaceable events, by the lowest id. An empty
// patch clears the scope.
func (c *Config) Apply(evt *nostr.Event, owner string) (Scope, error) {
	if evt == nil {
		return Scope{}, fmt.Errorf("no event")
	}
	if owner == "" || !strings.EqualFold(evt.PubKey, owner) {
		return Scope{}, fmt.Errorf("%w (author %s)", ErrNotOwner, shortKey(evt.PubKey))
	}
	scope, patch, err := ParsePatch(evt)
	if err != nil {
		return scope, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, ok := c.scopes[scope]; ok {
		if evt.CreatedAt < cur.at || evt.CreatedAt == cur.at && evt.ID >= cur.id {
			if evt.ID == cur.id {
				return scope, nil // the same event again
			}
			return scope, fmt.Errorf("%w (scope %s)", ErrStale, scope)
		}
	}
	c.scopes[scope] = applied{patch: patch, at: evt.CreatedAt, id: evt.ID}
	return scope, nil
}

func shortKey(pk string) string {
	if len(pk) > 16 {
		return pk[:16] + "…"
	}
	return pk
}

// Remove forgets a scope, e.g. when its event is deleted (NIP-09).
func (c *Config) Remove(s Scope) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.scopes, s)
}

// Get returns the patch of one scope; ok is false when nothing is set there.
func (c *Config) Get(s Scope) (Patch, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	a, ok := c.scopes[s]
	return a.patch, ok && !a.patch.IsZero()
}

// Scopes lists every scope that sets something, keyed by Scope.String.
func (c *Config) Scopes() map[string]Patch {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make(map[string]Patch, len(c.scopes))
	for s, a := range c.scopes {
		if !a.patch.IsZero() {
			out[s.String()] = a.patch
		}
	}
	return out
}

// Resolve returns the effective settings for a message from pubkey (hex or
// npub) in group ("" for a private conversation). Each field is taken from
// the first level that sets it: npub → group → global → config file →
// defaults. An npub scope written with the full key comes before one written
// with the legacy 32-char prefix.
func (c *Config) Resolve(pubkey, group string) Settings {
	if strings.HasPrefix(pubkey, "npub1") {
		if hex, err := snowclaw.ParsePubkey(pubkey); err == nil {
			pubkey = hex
		}
	}
	pubkey = strings.ToLower(pubkey)

	c.mu.RLock()
	levels := make([]Patch, 0, 5)
	if pubkey != "" {
		levels = append(levels, c.scopes[Scope{Kind: Npub, ID: pubkey}].patch)
		if len(pubkey) == 64 {
			levels = append(levels, c.scopes[Scope{Kind: Npub, ID: pubkey[:32]}].patch)
		}
	}
	if group != "" {
		levels = append(levels, c.scopes[Scope{Kind: Group, ID: group}].patch)
	}
	levels = append(levels, c.scopes[Scope{Kind: Global}].patch)
	c.mu.RUnlock()
	levels = append(levels, c.file)

	s := Settings{RespondMode: defaultRespondMode, ContextHistory: defaultContextHistory}
	modeSet, historySet := false, false
	for _, p := range levels {
		if !modeSet && p.RespondMode != "" {
			s.RespondMode, modeSet = p.RespondMode, true
		}
		if !historySet && p.ContextHistory != 0 {
			s.ContextHistory, historySet = p.ContextHistory, true
		}
	}
	return s
}
