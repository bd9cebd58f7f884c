package node

import (
	"context"

	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/plugins/agentlink"
	"github.com/snowclaw/snowclaw/policies"
)

// wire attaches every hook, the searcher and every route, here and
// nowhere else (plugins' Init only hands them the relay's paths:
// publishing and deleting). The order inside each slice is the order of
// the checks and of the reactions; docs/architecture.md lists it, and
// TestWire_OrderIsDocumented holds the two together:
//
//   - RejectEvent: cheap and stateless first (limits, rates), then what
//     must stay gone (deletions, erasures), versions, deletion requests,
//     the write rules, NIP-29's timeline rules and moderation, the group
//     keys' rule, the owner's trust list.
//   - OnEventSaved: group state first (whatever follows reads it), the
//     group keys (they follow membership), deletions carried out, the
//     index, the agent, live trust.
//   - OnEventDeleted (after the store removed the event): the index, the
//     agent, live trust (its reload reads the store without the event).
func (n *Node) wire(ctx context.Context) {
	r, o := n.relay, n.o
	writes := &policies.WriteRules{IDs: n.ids, Groups: n.groups}
	var link *agentlink.Link
	if n.agent != nil {
		link = agentlink.New(n.agent, n.groups, n.crypt.Plain)
	}
	r.RejectEvent = append(r.RejectEvent,
		r.RejectOverLimits,
		policies.EventRateLimit(o.EventRateIP, o.EventRatePubkey, n.ids.IsSystem),
		r.RejectDeleted,
		n.rejectErased,
		r.RejectOlderVersion,
		r.RejectForeignDeletion,
		writes.RejectEvent,
		n.groups.RejectTimeline, // NIP-29 late publication and timeline references
		n.groups.RejectEvent,    // NIP-29 moderation against the group state
		// the group keys' rule: a seal's shape and its writer's
		// membership are judged first
		n.crypt.RejectEvent,
		// the owner's source_preference: refused when unreadable, after
		// the write rules have refused non-owners
		n.memory.RejectBadPreference,
	)
	// the groups' metadata and answers, and the key deliveries, go
	// through r
	n.groups.Init(r)
	n.crypt.Init(r)
	// the relay tells kinds apart; which kind 30078 events are memories
	// is the schema's word
	r.CountStoredAs("memory", (*snowclaw.Event).IsMemoryItem)
	r.OnEventSaved = append(r.OnEventSaved,
		n.groups.OnEventSaved, // group state first: whatever follows reads it
		n.crypt.OnEventSaved,  // the keys follow membership
		r.ApplyDeletion,
	)
	if n.search != nil {
		r.OnEventSaved = append(r.OnEventSaved, n.search.OnEventSaved)
		r.OnEventDeleted = append(r.OnEventDeleted, n.search.OnEventDeleted)
	}
	if link != nil {
		r.OnEventSaved = append(r.OnEventSaved, link.OnEventSaved)
		r.OnEventDeleted = append(r.OnEventDeleted, link.OnEventDeleted)
		r.OnEphemeralEvent = append(r.OnEphemeralEvent, link.OnEphemeralEvent)
	}
	// the owner's source_preference, live: re-applied on every version
	// stored or deleted, and applied now
	r.OnEventSaved = append(r.OnEventSaved, n.memory.ConfigChanged)
	r.OnEventDeleted = append(r.OnEventDeleted, n.memory.ConfigChanged)
	n.memory.ApplyTrust(ctx)
	switch {
	case n.remote != nil:
		r.UseSearch(n.remote) // include:remote searches; the rest it hands to the index
	case n.search != nil:
		r.UseSearch(n.search.Searcher())
	}

	r.RejectFilter = append(r.RejectFilter,
		policies.FilterRateLimit(o.FilterRateIP),
		o.Limits.RejectFilter,
		r.RejectSearchOff,
		n.vis.RejectFilter, // the read rule, for the connection's reader
	)
	n.api.Routes(r.Mux())
}

// rejectErased keeps what a forget or destroy removed from coming back.
func (n *Node) rejectErased(_ context.Context, evt *snowclaw.Event) error {
	if n.rights.Blocks(evt) {
		return snowclaw.Blocked("this event was erased at its subject's request and cannot be stored again")
	}
	return nil
}
