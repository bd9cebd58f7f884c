package groupcrypt

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// ring is one group's keys as they rest in the store: every version ever
// made (old memories stay readable by whoever holds their key), the
// members the current one was given to, against which a removal is told,
// and those of them whose delivery is not known to be stored yet.
type ring struct {
	Group   string              `json:"group"`
	Keys    []snowclaw.GroupKey `json:"keys"`    // ascending versions; the last is current
	Holders []string            `json:"holders"` // sorted hex pubkeys meant to hold the current key
	// Owed are the holders with a delivery outstanding (sorted): named
	// before a send and dropped once it is stored, so a send that failed
	// or never ran is retried, with every key (reconcile).
	Owed []string `json:"owed,omitempty"`

	at nostr.Timestamp // created_at of the stored event
}

func (r *ring) version(v int) (snowclaw.GroupKey, bool) {
	for _, k := range r.Keys {
		if k.Version == v {
			return k, true
		}
	}
	return snowclaw.GroupKey{}, false
}

func (r *ring) current() snowclaw.GroupKey { return r.Keys[len(r.Keys)-1] }

func (r *ring) clone() *ring {
	c := *r
	c.Keys, c.Holders, c.Owed = slices.Clone(r.Keys), slices.Clone(r.Holders), slices.Clone(r.Owed)
	return &c
}

// same reports whether r and o would be stored alike.
func (r *ring) same(o *ring) bool {
	return r.Group == o.Group && slices.Equal(r.Keys, o.Keys) && slices.Equal(r.Holders, o.Holders) && slices.Equal(r.Owed, o.Owed)
}

// check refuses a ring that could seal nothing or that mixes up versions.
func (r *ring) check() error {
	if r.Group == "" || len(r.Keys) == 0 {
		return fmt.Errorf("group keys %q: no group or no keys", r.Group)
	}
	for i, k := range r.Keys {
		if err := k.Check(); err != nil {
			return fmt.Errorf("group keys %q: %w", r.Group, err)
		}
		if i > 0 && k.Version <= r.Keys[i-1].Version {
			return fmt.Errorf("group keys %q: versions out of order", r.Group)
		}
	}
	return nil
}

// event is the ring at rest: a kind 30078 record in its own namespace,
// NIP-44 sealed from the agent to itself (snowclaw.Seal), no h tag, so
// the read rule gives it to the agent only, and neither the search index
// nor any view decrypts it. Several instances over one PostgreSQL read
// the same record.
func (p *Plugin) event(r *ring) (*nostr.Event, error) {
	plain, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	sealed, err := snowclaw.Seal(string(plain), p.o.AgentSecret, p.agent)
	if err != nil {
		return nil, err
	}
	evt := &nostr.Event{
		Kind:      snowclaw.KindAppData,
		CreatedAt: r.at,
		Tags:      nostr.Tags{{"d", snowclaw.PrefixGroupKey + r.Group}, {"encrypted", "nip44"}},
		Content:   sealed,
	}
	if err := evt.Sign(p.o.AgentSecret); err != nil {
		return nil, fmt.Errorf("signing group keys: %w", err)
	}
	return evt, nil
}

// adopt takes a stored ring in, unless a newer one is held.
func (p *Plugin) adopt(evt *snowclaw.Event) error {
	g := evt.Subject
	if evt.Namespace != snowclaw.NamespaceGroupKey || evt.PubKey != p.agent {
		return nil
	}
	plain, err := snowclaw.Open(evt, p.o.AgentSecret, p.agent, "")
	if err != nil {
		return fmt.Errorf("group keys of %s: %w", g, err)
	}
	var r ring
	if err := json.Unmarshal([]byte(plain), &r); err != nil {
		return fmt.Errorf("group keys of %s: %w", g, err)
	}
	if err := r.check(); err != nil {
		return err
	}
	if r.Group != g {
		return fmt.Errorf("group keys stored under %s name group %s", g, r.Group)
	}
	r.at = evt.CreatedAt
	p.mu.Lock()
	defer p.mu.Unlock()
	if old := p.rings[g]; old == nil || old.at < r.at {
		p.rings[g] = &r
	}
	return nil
}

// save stores r (a newer version of the group's record) and holds it. The
// keys are in the store before anything is sealed with them or sent.
func (p *Plugin) save(ctx context.Context, r *ring) error {
	r.at = nostr.Now()
	p.mu.RLock()
	if old := p.rings[r.Group]; old != nil && r.at <= old.at {
		r.at = old.at + 1 // a replaceable version must be strictly newer
	}
	p.mu.RUnlock()
	evt, err := p.event(r)
	if err != nil {
		return err
	}
	if err := p.publish(ctx, evt); err != nil {
		return fmt.Errorf("storing group keys of %s: %w", r.Group, err)
	}
	p.mu.Lock()
	p.rings[r.Group] = r
	p.mu.Unlock()
	return nil
}

// ringOf is a copy of group g's ring, nil when it has none.
func (p *Plugin) ringOf(g string) *ring {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if r := p.rings[g]; r != nil {
		return r.clone()
	}
	return nil
}
