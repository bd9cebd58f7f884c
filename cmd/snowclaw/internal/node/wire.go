package node

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/plugins/agentlink"
	"github.com/snowclaw/snowclaw/policies"
)

// wire attaches every hook and route, here and nowhere else. The order
// inside each slice is the order of the checks and of the reactions:
//
//   - RejectEvent: cheap and stateless first (limits, rates), then what
//     must stay gone (deletions, erasures), versions, deletion requests,
//     the write rules, NIP-29 moderation, the group keys' rule, the
//     owner's trust list.
//   - OnEventSaved: group state first (whatever follows reads it), the
//     group keys (they follow membership), deletions carried out, the
//     index, the agent, live trust.
//   - OnEventDeleted (after the store removed the event): the index, the
//     agent, live trust (its reload reads the store without the event).
func (n *Node) wire(ctx context.Context) {
	r, o := n.relay, n.o
	writes := &policies.WriteRules{IDs: n.ids, Groups: n.groups}
	r.RejectEvent = append(r.RejectEvent,
		r.RejectOverLimits,
		policies.EventRateLimit(o.EventRateIP, o.EventRatePubkey, n.ids.IsSystem),
		r.RejectDeleted,
		n.rejectErased,
		r.RejectOlderVersion,
		r.RejectForeignDeletion,
		func(_ context.Context, evt *nostr.Event) error { return writes.Check(evt) },
		n.groups.RejectEvent, // NIP-29 moderation against the group state
		// the group keys' rule: a seal's shape and its writer's
		// membership are judged first
		n.crypt.RejectEvent,
	)
	// the groups' metadata and answers, and the key deliveries, go
	// through r
	n.groups.Init(r)
	n.crypt.Init(r)
	// the relay tells kinds apart; which kind 30078 events are memories
	// is the schema's word
	r.CountStoredAs("memory", snowclaw.IsMemoryItem)
	r.OnEventSaved = append(r.OnEventSaved,
		n.groups.OnEventSaved, // group state first: whatever follows reads it
		n.crypt.OnEventSaved,  // the keys follow membership
		r.ApplyDeletion,
	)
	if n.search != nil {
		n.search.Init(r)
	}
	if n.remote != nil {
		r.UseSearch(n.remote) // include:remote searches; the rest it hands to the index
	}
	if n.agent != nil {
		agentlink.Init(r, n.agent, n.groups, n.crypt.Plain)
	}
	// the owner's source_preference, live: refused when unreadable (after
	// the write rules have refused non-owners), re-applied on every
	// version stored or deleted, and applied now
	r.RejectEvent = append(r.RejectEvent, n.memory.RejectBadPreference)
	r.OnEventSaved = append(r.OnEventSaved, n.memory.ConfigChanged)
	r.OnEventDeleted = append(r.OnEventDeleted, n.memory.ConfigChanged)
	n.memory.ApplyTrust(ctx)

	r.RejectFilter = append(r.RejectFilter,
		policies.FilterRateLimit(o.FilterRateIP),
		o.Limits.RejectFilter,
		r.RejectSearchOff,
		func(ctx context.Context, f nostr.Filter) error { return n.vis.CheckFilter(policies.ReaderOf(ctx), f) },
	)
	n.api.Routes(r.Mux())
}

// rejectErased keeps what a forget or destroy removed from coming back.
func (n *Node) rejectErased(_ context.Context, evt *nostr.Event) error {
	if n.rights.Blocks(evt) {
		return snowclaw.Blocked("this event was erased at its subject's request and cannot be stored again")
	}
	return nil
}
