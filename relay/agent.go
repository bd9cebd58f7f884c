package relay

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent"
	"github.com/snowclaw/snowclaw/plugins/agentlink"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/relay/store"
)

// newAgent creates the resident agent and links it to the hooks; New
// starts it (loading its memory) once the rights service exists. It
// publishes through add, the path client events take, so
// the write rules hold for the agent as for anyone.
func (r *Relay) newAgent() error {
	ao := r.opts.Agent
	opts := agent.Options{
		Secret: r.opts.Keys.AgentSecret, Owner: r.ids.Owner, Name: ao.Name,
		Publish: r.add,
		Query: func(ctx context.Context, f nostr.Filter, fn func(*nostr.Event) bool) error {
			return store.Each(ctx, r.store, f, fn)
		},
		LLM: ao.LLM, File: ao.File, Instructions: ao.Instructions, TokenBudget: ao.TokenBudget,
		KnownKeys: append([]string{r.ids.Relay}, ao.KnownKeys...),
		QueueSize: ao.QueueSize, FlushEvery: ao.FlushEvery, FlushInterval: ao.FlushInterval,
		MaxItems: ao.MaxItems, MaxLessons: ao.MaxLessons,
		Logger: r.log,
		// the rights service is built after the agent, and before the
		// agent starts handling messages
		Commands: func(ctx context.Context, from, text string) (string, bool) {
			return r.rights.Command(ctx, from, text)
		},
	}
	if r.mem != nil {
		opts.Recall = agentlink.Recall(r.mem, r.recallReader)
	}
	opts.MayShow = r.canQuote
	a, err := agent.New(opts)
	if err != nil {
		return err
	}
	r.tellAgentOfDeletions(a)
	feed := agentlink.Feed(a)
	r.OnEventSaved = append(r.OnEventSaved, feed)
	r.OnEphemeralEvent = append(r.OnEphemeralEvent, feed)
	r.agent = a
	return nil
}

// tellAgentOfDeletions keeps the agent's RAM in step with the store: it
// hears every event Delete removes from the store,
// and every delete-group once the groups plugin has carried it out. The
// agent never learnt of either, so a moderator's deletion of its record
// was undone by its next flush, and a group re-created under a deleted
// one's id got the old group's memories and history.
func (r *Relay) tellAgentOfDeletions(a *agent.Agent) {
	r.OnEventDeleted = append(r.OnEventDeleted, func(_ context.Context, evt *nostr.Event) { a.Deleted(evt) })
	r.OnEventSaved = append(r.OnEventSaved, func(_ context.Context, evt *nostr.Event) {
		if evt.Kind != snowclaw.KindDeleteGroup {
			return
		}
		g := snowclaw.GroupOf(evt)
		if _, exists := r.groups.Snapshot(g); g != "" && !exists {
			a.GroupDeleted(g)
		}
	})
}

// canQuote is the read rule for what the agent's replies carry: evt may
// go into a reply's prompt only if everyone who may read the reply may
// read it (policies.Visibility.CanQuote), expiry included as for reads.
func (r *Relay) canQuote(reply, evt *nostr.Event) bool {
	if policies.Expired(evt, nostr.Now()) {
		return false
	}
	ok, _ := r.vis.CanQuote(reply, evt)
	return ok
}

// recallReader is whom the agent's recall searches as. It read as the
// agent, which reads everything, and dropped the unquotable afterwards:
// then memories no reader of the reply may see still took the few
// places, and what was left told the readers about them. It searches as
// a reader of the reply instead: anyone when anyone may read it (an
// open room), else the person it answers. canQuote then keeps what every
// reader may read.
func (r *Relay) recallReader(req agent.RecallRequest) string {
	if req.Reply != nil && r.canRead("", req.Reply) {
		return ""
	}
	return req.Person
}

// Agent exposes the resident agent (nil when it is off).
func (r *Relay) Agent() *agent.Agent { return r.agent }
