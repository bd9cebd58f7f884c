package memsearch

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/relay"
)

// Init attaches the index to r: it answers r's NIP-50 filters, indexes
// every stored event and drops every deleted one.
func (p *Plugin) Init(r *relay.Relay) {
	r.UseSearch(searcher{p})
	r.OnEventSaved = append(r.OnEventSaved, p.OnEventSaved)
	r.OnEventDeleted = append(r.OnEventDeleted, p.OnEventDeleted)
}

// searcher is the plugin as the relay's Searcher: explain rows travel as
// a plain value, nil when none were asked for.
type searcher struct{ p *Plugin }

func (s searcher) Search(ctx context.Context, reader string, f nostr.Filter) ([]*nostr.Event, any, error) {
	evs, rows, err := s.p.Query(ctx, reader, f)
	if rows == nil {
		return evs, nil, err
	}
	return evs, rows, err
}

func (s searcher) MatchLive(query string, evt *nostr.Event) bool { return s.p.MatchLive(query, evt) }
