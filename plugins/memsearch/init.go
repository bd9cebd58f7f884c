package memsearch

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/relay"
)

// Init attaches the index to r: it answers r's NIP-50 filters, indexes
// every stored event and drops every deleted one.
func (p *Plugin) Init(r *relay.Relay) {
	r.UseSearch(searcher{p})
	r.OnEventSaved = append(r.OnEventSaved, p.OnEventSaved)
	r.OnEventDeleted = append(r.OnEventDeleted, p.OnEventDeleted)
}

// searcher is the plugin as the relay's Searcher.
type searcher struct{ p *Plugin }

func (s searcher) Search(ctx context.Context, reader string, f snowclaw.Filter) ([]*nostr.Event, []snowclaw.ExplainRow, error) {
	return s.p.Query(ctx, reader, f)
}

func (s searcher) MatchLive(q snowclaw.SearchQuery, evt *nostr.Event) bool {
	return s.p.MatchLive(q, evt)
}
