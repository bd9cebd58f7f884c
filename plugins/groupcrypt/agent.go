package groupcrypt

import (
	"context"
	"fmt"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent"
)

// WrapAgent attaches the agent: what it publishes to an encrypted group is
// sealed with the current key and signed again with its key; what it reads
// from the store and from its recall comes opened (Plain), without the
// key records. The agent itself knows nothing of group keys.
func (p *Plugin) WrapAgent(ao *agent.Options) {
	if next := ao.Publish; next != nil {
		ao.Publish = func(ctx context.Context, evt *nostr.Event) error {
			if err := p.seal(evt); err != nil {
				return err
			}
			return next(ctx, evt)
		}
	}
	if next := ao.Query; next != nil {
		ao.Query = func(ctx context.Context, f nostr.Filter, fn func(*nostr.Event) bool) error {
			return next(ctx, f, func(evt *nostr.Event) bool {
				e := snowclaw.ReadEvent(evt)
				if e.Namespace == snowclaw.NamespaceGroupKey {
					return true // the keys are this package's, not the agent's memory
				}
				return fn(p.Plain(e).Event)
			})
		}
	}
	if next := ao.Recall; next != nil {
		ao.Recall = func(ctx context.Context, req agent.RecallRequest) ([]snowclaw.SearchHit, error) {
			found, err := next(ctx, req)
			for i := range found {
				found[i].Event = p.Plain(snowclaw.ReadEvent(found[i].Event)).Event
			}
			return found, err
		}
	}
}

// seal turns an agent's plain group memory for an encrypted group into its
// sealed form, in place (the caller's event is the one stored).
func (p *Plugin) seal(evt *nostr.Event) error {
	e := snowclaw.ReadEvent(evt)
	if evt.PubKey != p.agent || !p.sealable(e) {
		return nil
	}
	g := e.Group
	k, ok := p.Current(g)
	if !ok {
		// reconcile makes the key when encryption is switched on; until
		// then the agent's flush retries
		return snowclaw.Restricted("group %s is encrypted but has no key yet", g)
	}
	sealed := *evt
	sealed.Tags = append(nostr.Tags(nil), evt.Tags...)
	if err := snowclaw.SealGroupEvent(&sealed, k); err != nil {
		return fmt.Errorf("sealing a memory of group %s: %w", g, err)
	}
	if err := sealed.Sign(p.o.AgentSecret); err != nil {
		return fmt.Errorf("signing a sealed memory of group %s: %w", g, err)
	}
	*evt = sealed
	return nil
}

// Plain is what the agent reads of evt: a group-sealed memory opened with
// the group's key and stripped of its seal markers (same id; the agent
// keeps it in RAM only, read anew as the plain event it now is), anything
// else as it is. One it cannot open stays sealed, and the agent's decoder
// skips it.
func (p *Plugin) Plain(evt *snowclaw.Event) *snowclaw.Event {
	if evt == nil || !evt.GroupSealed {
		return evt
	}
	plain, err := p.Open(evt)
	if err != nil {
		return evt
	}
	c := *evt.Event
	c.Content = plain
	c.Tags = make(nostr.Tags, 0, len(evt.Tags))
	for _, t := range evt.Tags {
		if len(t) >= 1 && (t[0] == "encrypted" || t[0] == snowclaw.TagKeyVersion) {
			continue
		}
		c.Tags = append(c.Tags, t)
	}
	return snowclaw.ReadEvent(&c)
}
