// Package agentlink attaches the resident agent to the relay: every stored
// and ephemeral event is offered to the agent's bounded queue from the
// relay's hooks (no websocket, no network hop), and the agent's recall
// is answered by the search index.
package agentlink

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent"
	"github.com/snowclaw/snowclaw/plugins/memsearch"
)

// Feed is the hook, for the relay's OnEventSaved and OnEphemeralEvent,
// that offers an event to the agent. It must come after the hooks that
// decide whether an event is kept, since OnEventSaved only runs for
// stored events. It never blocks the relay: the agent drops (and
// counts) what its full queue cannot take.
func Feed(a *agent.Agent) func(context.Context, *nostr.Event) {
	return func(_ context.Context, evt *nostr.Event) { a.Feed(evt) }
}

// Recall returns agent.Options.Recall over the search index: memory items
// ranked for the message, searched as readerOf names for the request (a
// reader of the reply, so that nobody else's memories are ranked and
// crowd the results); the agent keeps only what the reply's audience may
// read.
func Recall(search *memsearch.Plugin, readerOf func(agent.RecallRequest) string) func(context.Context, agent.RecallRequest) ([]*nostr.Event, error) {
	return func(ctx context.Context, req agent.RecallRequest) ([]*nostr.Event, error) {
		f := nostr.Filter{Kinds: []int{snowclaw.KindAppData}, Search: req.Query, Limit: req.Limit}
		evts, _, err := search.Query(ctx, readerOf(req), f)
		return evts, err
	}
}
