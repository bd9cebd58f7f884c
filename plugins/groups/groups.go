// Package groups implements NIP-29 relay-managed groups: group state built
// from moderation events, the permission checks for every moderation kind,
// join and leave requests, and the relay-signed metadata events
// (39000–39003) that mirror the state. Init hands it the relay's
// publishing and deleting paths; its hooks are listed in the node's
// wiring.
package groups

import (
	"cmp"
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/policies"
)

// Options configure the groups plugin.
type Options struct {
	IDs         policies.Identities
	RelaySecret string   // hex; signs 39000–39003, 9000 and 9001 answers
	Creators    []string // hex pubkeys allowed to create groups besides the owner
	Defaults    policies.GroupInfo
	// Encrypted are the groups the owner's configuration keeps encrypted
	// ([groups] encrypted): on whatever their flag says, and no admin
	// can switch them off.
	Encrypted []string
	// MaxEventAge refuses group events older than this (NIP-29 "late
	// publication"); zero means one hour. AcceptMoved lifts it, for a
	// relay "open to receive a group forked or moved from another relay".
	MaxEventAge time.Duration
	AcceptMoved bool
	// Limits are the relay's own size limits, which the relay-signed
	// metadata obeys like every event (a big group's member list is cut
	// to fit: metadata.go).
	Limits policies.Limits
	Store  eventstore.Store
	// Clock dates the relay-signed metadata; nil is the wall clock.
	Clock  func() time.Time
	Logger *slog.Logger
}

// Groups is the NIP-29 state of the relay. It implements policies.GroupView.
type Groups struct {
	opts Options
	log  *slog.Logger
	// publish and del are the relay's add-and-broadcast and delete paths
	// (Init): nil until the relay is wired, and nothing is published
	// before then.
	publish func(ctx context.Context, evt *nostr.Event) error
	del     func(ctx context.Context, evt *nostr.Event) error

	mu     sync.RWMutex
	groups map[string]*Group // the groups that exist
	// deleted is the position of the newest delete-group applied per
	// group id: events before it belong to a group that is gone.
	deleted map[string]at
	// local is the highest position applied: a store that numbers
	// nothing gets positions after it (position).
	local at

	meta *metaPublisher
}

// New returns an empty group state; call Load to rebuild it from the store.
func New(opts Options) *Groups {
	if opts.MaxEventAge == 0 {
		opts.MaxEventAge = time.Hour
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	s := &Groups{
		opts:    opts,
		log:     opts.Logger.With("component", "groups"),
		groups:  make(map[string]*Group),
		deleted: make(map[string]at),
	}
	s.meta = newMetaPublisher(s)
	return s
}

// GroupInfo implements policies.GroupView.
func (s *Groups) GroupInfo(id string) (policies.GroupInfo, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return held{s}.GroupInfo(id)
}

// IsMember implements policies.GroupView.
func (s *Groups) IsMember(group, pubkey string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return held{s}.IsMember(group, pubkey)
}

// Moderates implements policies.GroupView: pubkey may act as a moderator
// of group (and so create and read its invite codes).
func (s *Groups) Moderates(group, pubkey string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return held{s}.Moderates(group, pubkey)
}

// Banned implements policies.Bans: a moderator removed pubkey from group
// and nobody brought them back.
func (s *Groups) Banned(group, pubkey string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return held{s}.Banned(group, pubkey)
}

// Snapshot returns a copy of one group for callers outside the plugin
// (tests, the agent, the UI).
func (s *Groups) Snapshot(id string) (Group, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	g, ok := s.groups[id]
	if !ok {
		return Group{}, false
	}
	return g.clone(), true
}

// IDs lists the groups that exist.
func (s *Groups) IDs() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.groups))
	for id := range s.groups {
		out = append(out, id)
	}
	return out
}

func (g *Group) clone() Group {
	c := *g
	c.rec = nil
	c.Members = make(map[string][]string, len(g.Members))
	for k, v := range g.Members {
		c.Members[k] = append([]string(nil), v...)
	}
	c.Invites = maps.Clone(g.Invites)
	c.JoinedWith = make(map[string][]string, len(g.JoinedWith))
	for k, v := range g.JoinedWith {
		c.JoinedWith[k] = slices.Clone(v)
	}
	c.Removed = maps.Clone(g.Removed)
	return c
}

// The subgroup tree (NIP-29 "Subgroups") is derived, never stored: a
// group's parent is what its last edit named, while that group exists and
// was created before the edit (a deleted parent leaves its children roots,
// and a group created again under the same id does not adopt them); a
// parent's children are the groups naming it so, in the order its last
// edit with child tags gave, then in the order they came. s.mu is held.

// parentOf is g's parent group, or "" for a root.
func (s *Groups) parentOf(g *Group) string {
	p := s.groups[g.Parent]
	if g.Parent == "" || p == nil || g.parentAt() <= p.rec.born {
		return ""
	}
	return g.Parent
}

// children are gid's child groups in their order.
func (s *Groups) children(gid string) []string {
	type child struct {
		id    string
		since at
	}
	var out []child
	for id, c := range s.groups {
		if c.Parent == gid && s.parentOf(c) == gid {
			out = append(out, child{id, c.parentAt()})
		}
	}
	var order []string
	if g := s.groups[gid]; g != nil {
		order = g.ChildOrder
	}
	rank := func(id string) int {
		if i := slices.Index(order, id); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortFunc(out, func(a, b child) int {
		if c := cmp.Compare(rank(a.id), rank(b.id)); c != 0 {
			return c
		}
		return cmp.Compare(a.since, b.since)
	})
	ids := make([]string, len(out))
	for i, c := range out {
		ids[i] = c.id
	}
	return ids
}

// childrenOf are the groups whose last edit names gid as their parent,
// whether or not the link counts now: their metadata may change when gid
// is created or deleted.
func (s *Groups) childrenOf(gid string) []string {
	var out []string
	for id, c := range s.groups {
		if c.Parent == gid && id != gid {
			out = append(out, id)
		}
	}
	return out
}

// ancestors reports whether anc is gid or one of its ancestors (a cycle
// guard: the walk stops at a repeat).
func (s *Groups) ancestors(gid, anc string) bool {
	seen := map[string]bool{}
	for id := gid; id != "" && !seen[id]; {
		if id == anc {
			return true
		}
		seen[id] = true
		g := s.groups[id]
		if g == nil {
			return false
		}
		id = s.parentOf(g)
	}
	return false
}
