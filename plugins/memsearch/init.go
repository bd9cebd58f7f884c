package memsearch

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/relay"
)

// Searcher is the index as the relay's NIP-50 answerer. The node lists
// it, with the index's saved and deleted hooks (OnEventSaved,
// OnEventDeleted), in its one wiring function.
func (p *Plugin) Searcher() relay.Searcher { return searcher{p} }

// searcher is the plugin as the relay's Searcher.
type searcher struct{ p *Plugin }

func (s searcher) Search(ctx context.Context, reader string, f snowclaw.Filter) ([]*nostr.Event, []snowclaw.ExplainRow, error) {
	return s.p.Query(ctx, reader, f)
}

func (s searcher) MatchLive(q snowclaw.SearchQuery, evt *snowclaw.Event) bool {
	return s.p.MatchLive(q, evt)
}
