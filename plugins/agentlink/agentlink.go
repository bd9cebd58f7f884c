// Package agentlink attaches the resident agent to the relay: every stored
// and ephemeral event is offered to the agent's bounded queue from the
// relay's hooks (no websocket, no network hop), deletions reach its
// memory, and the agent's recall is answered by the search index under
// the relay's read rule.
package agentlink

import (
	"context"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent"
	"github.com/snowclaw/snowclaw/plugins/groups"
	"github.com/snowclaw/snowclaw/plugins/memsearch"
	"github.com/snowclaw/snowclaw/plugins/remotesearch"
	"github.com/snowclaw/snowclaw/policies"
)

// Link is the agent as the relay's hooks. The node lists them, in
// order, with everyone's: after the hooks that decide whether an event is
// kept (OnEventSaved only runs for stored events) and after the groups
// plugin's (a delete-group is carried out before the agent hears of it).
// Feeding never blocks the relay: the agent drops (and counts) what its
// full queue cannot take.
//
// The agent also hears every event the relay's Delete removes from the
// store, and every delete-group once the groups plugin has carried it
// out: its records live in its RAM, so without them its next flush would
// write back a record a moderator deleted, and a group re-created under a
// deleted one's id would inherit the old group's memories and history.
type Link struct {
	a     *agent.Agent
	g     *groups.Groups
	plain func(*snowclaw.Event) *snowclaw.Event
}

// New links a. plain, when not nil, is what the agent is fed of each
// event (the group keys' opener, plugins/groupcrypt): the agent reads
// group memories in plain, in its RAM only.
func New(a *agent.Agent, g *groups.Groups, plain func(*snowclaw.Event) *snowclaw.Event) *Link {
	return &Link{a: a, g: g, plain: plain}
}

// OnEventSaved tells the agent of a deleted group, of the owner's
// ruling on a conflict, and feeds it the event.
func (l *Link) OnEventSaved(ctx context.Context, evt *snowclaw.Event) {
	if evt.Kind == snowclaw.KindDeleteGroup {
		gid := evt.Group
		if _, exists := l.g.Snapshot(gid); gid != "" && !exists {
			l.a.GroupDeleted(gid)
		}
	}
	// the owner's ruling on a conflict (plugins/memory), signed with the
	// agent key, holds its address from now on: the agent is not fed its
	// own events, and on every instance of a shared deployment this hook
	// runs as the event is stored or followed
	if evt.IsMemoryItem() && evt.PubKey == l.a.Pubkey() && snowclaw.HasTag(evt.Event, snowclaw.TagResolution) {
		l.a.Ruled(evt.Subject)
	}
	l.OnEphemeralEvent(ctx, evt)
}

// OnEphemeralEvent feeds the agent an event that is not stored.
func (l *Link) OnEphemeralEvent(_ context.Context, evt *snowclaw.Event) {
	if l.plain != nil {
		evt = l.plain(evt)
	}
	l.a.Feed(evt)
}

// OnEventDeleted tells the agent an event left the store.
func (l *Link) OnEventDeleted(_ context.Context, evt *snowclaw.Event) { l.a.Deleted(evt) }

// MayShow is agent.Options.MayShow, the read rule for what the agent's
// replies carry: evt may go into a reply's prompt only if everyone who
// may read the reply may read it (policies.Visibility.CanQuote), expiry
// included as for reads, by the relay's clock (now).
func MayShow(vis *policies.Visibility, now func() time.Time) func(reply, evt *nostr.Event) bool {
	return func(reply, evt *nostr.Event) bool {
		e := snowclaw.ReadEvent(evt)
		if e.Expired(nostr.Timestamp(now().Unix())) {
			return false
		}
		ok, _ := vis.CanQuote(snowclaw.ReadEvent(reply), e)
		return ok
	}
}

// Recall returns agent.Options.Recall over the search index: memory items
// ranked for the message, searched as a reader of the reply, so that
// nobody else's memories are ranked and crowd the results; the agent
// keeps only what the reply's audience may read (MayShow).
//
// The search is not the agent's own (it reads everything) filtered
// afterwards: memories no reader of the reply may see would take the few
// places, and the gaps they left would tell the readers about them. So it
// searches as anyone when anyone may read the reply (an open room;
// canRead is the relay's read rule), else as the person it answers.
//
// With layered set ([memory.remote] agent_default), a reply anyone may
// read recalls from the remote relays too. A reply to a private message
// or in a closed group never does: its query is the words of that
// conversation, which must not leave this relay.
//
// Each remote result carries its remote's URL as origin, for the prompt.
func Recall(search *memsearch.Plugin, layered *remotesearch.Layer, canRead func(reader string, evt *nostr.Event) bool) func(context.Context, agent.RecallRequest) ([]snowclaw.SearchHit, error) {
	return func(ctx context.Context, req agent.RecallRequest) ([]snowclaw.SearchHit, error) {
		reader := req.Person
		public := req.Reply != nil && canRead("", req.Reply)
		if public {
			reader = ""
		}
		// the query is the words of a conversation, not a search string: a
		// "tier:…" or "since:…" someone typed is text, never a flag
		q := snowclaw.SearchQuery{Text: req.Query}
		f := snowclaw.SearchFilter(nostr.Filter{Kinds: []int{snowclaw.KindAppData}, Limit: req.Limit}, q)
		if layered != nil && public {
			evts, rows, err := layered.Layered(ctx, reader, f)
			out := make([]snowclaw.SearchHit, len(evts))
			for i, evt := range evts {
				out[i].Event = evt
				if i < len(rows) && rows[i].ID == evt.ID {
					out[i].Origin = rows[i].Origin
				}
			}
			return out, err
		}
		evts, _, err := search.Query(ctx, reader, f)
		out := make([]snowclaw.SearchHit, len(evts))
		for i, evt := range evts {
			out[i].Event = evt
		}
		return out, err
	}
}
