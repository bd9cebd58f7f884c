// Package groupcrypt is the encrypted group tier (docs/group-encryption.md):
// the relay's agent key holds each encrypted group's keys, hands them to
// the members in NIP-17 private messages, makes a new one when a member
// is removed or leaves, seals the agent's group memories with the current
// one, and refuses group memories that are not sealed with it. The keys
// rest in the store sealed to the agent itself (ring.go), so every
// instance over a shared store reads the same keys. Init hands it the
// relay's publishing path; its hooks are listed in the node's wiring;
// WrapAgent attaches it to the agent.
package groupcrypt

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/plugins/groups"
	"github.com/snowclaw/snowclaw/relay"
	"github.com/snowclaw/snowclaw/relay/store"
)

// Options configure the plugin.
type Options struct {
	AgentSecret string // hex: holds the keys, signs the deliveries
	Store       eventstore.Store
	Groups      *groups.Groups
	// IsSystem tells the relay's own keys, which are no members to
	// deliver keys to.
	IsSystem func(pk string) bool
	// Active reports whether this instance manages keys (makes, rotates
	// and delivers them): always alone on a store, the agent's leader
	// over a shared one. nil: always.
	Active func() bool
	// Owner is the relay owner's hex key: with a group's admins, the one
	// who may see its key deliveries (KeyStatus).
	Owner string
	// RetryEvery is how often Run reconciles every group, which resends
	// the deliveries that failed; 0 means DefaultRetryEvery.
	RetryEvery time.Duration
	Logger     *slog.Logger
}

// DefaultRetryEvery is RetryEvery's default: how long a member whose key
// delivery failed waits, at most, once the store takes writes again.
const DefaultRetryEvery = time.Minute

// Plugin holds the groups' keys.
type Plugin struct {
	o       Options
	agent   string
	log     *slog.Logger
	publish func(ctx context.Context, evt *nostr.Event) error

	mu    sync.RWMutex
	rings map[string]*ring // group → its keys

	work sync.Mutex // one reconcile at a time (rotate.go)
}

// New returns a plugin with no keys; Load reads them.
func New(o Options) (*Plugin, error) {
	pk, err := nostr.GetPublicKey(o.AgentSecret)
	if err != nil || o.AgentSecret == "" {
		return nil, errors.New("groupcrypt: the agent's secret key is required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Active == nil {
		o.Active = func() bool { return true }
	}
	if o.RetryEvery <= 0 {
		o.RetryEvery = DefaultRetryEvery
	}
	return &Plugin{o: o, agent: pk, log: o.Logger.With("component", "groupcrypt"), rings: make(map[string]*ring)}, nil
}

// Load reads every group's keys from the store. Call it before the search
// index opens: the index opens group memories with these keys.
func (p *Plugin) Load(ctx context.Context) error {
	var bad error
	err := store.Each(ctx, p.o.Store, nostr.Filter{Kinds: []int{snowclaw.KindAppData}, Authors: []string{p.agent}}, func(evt *nostr.Event) bool {
		e := snowclaw.ReadEvent(evt)
		if e.Namespace != snowclaw.NamespaceGroupKey {
			return true
		}
		if err := p.adopt(e); err != nil {
			bad = err
			return false
		}
		return true
	})
	if err == nil {
		err = bad
	}
	return err
}

// Init binds the plugin to r, through which it delivers keys. Its hooks
// are listed with everyone's in the node's wiring: RejectEvent after the
// write rules and NIP-29 moderation (the shape of a group seal is the
// write rules' to judge), OnEventSaved right after the groups plugin's
// (the keys follow the membership it has just applied).
func (p *Plugin) Init(r *relay.Relay) {
	p.publish = r.Publish
}

// Start brings every group's keys in line with its members, for what
// changed while no instance managed them.
func (p *Plugin) Start(ctx context.Context) {
	for _, g := range p.o.Groups.IDs() {
		p.reconcile(ctx, g)
	}
}

// Run reconciles every group's keys each RetryEvery until ctx ends, so a
// delivery that failed, or a record that could not be stored, is tried
// again without waiting for the group to change. It does nothing where
// this instance does not manage keys (Active).
func (p *Plugin) Run(ctx context.Context) {
	t := time.NewTicker(p.o.RetryEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			for _, g := range p.o.Groups.IDs() {
				if ctx.Err() != nil {
					return
				}
				p.reconcile(ctx, g)
			}
		}
	}
}

// OnEventSaved adopts keys another instance stored, and reconciles a
// group's keys with its members after any change of its state.
func (p *Plugin) OnEventSaved(ctx context.Context, evt *snowclaw.Event) {
	if evt.Namespace == snowclaw.NamespaceGroupKey {
		if evt.PubKey == p.agent {
			if err := p.adopt(evt); err != nil {
				p.log.Error("stored group keys unreadable", "err", err)
			}
		}
		return
	}
	if !snowclaw.IsGroupStateKind(evt.Kind) {
		return
	}
	if g := evt.Group; g != "" {
		p.reconcile(ctx, g)
	}
}

// KeyOf returns group g's key of version v.
func (p *Plugin) KeyOf(g string, v int) (snowclaw.GroupKey, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	r := p.rings[g]
	if r == nil {
		return snowclaw.GroupKey{}, false
	}
	return r.version(v)
}

// Current returns group g's current key.
func (p *Plugin) Current(g string) (snowclaw.GroupKey, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	r := p.rings[g]
	if r == nil || len(r.Keys) == 0 {
		return snowclaw.GroupKey{}, false
	}
	return r.Keys[len(r.Keys)-1], true
}

// Open is the plain content of a group-encrypted event (memsearch's
// opener for the RAM-only index).
func (p *Plugin) Open(evt *snowclaw.Event) (string, error) {
	return snowclaw.OpenGroup(evt, p.KeyOf)
}
