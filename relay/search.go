package relay

import (
	"context"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// Searcher answers NIP-50 filters (plugins/memsearch). The relay only
// parses them (once, at the edge), passes them through, counts and times
// them, and sends the explain rows as JSON.
type Searcher interface {
	// Search runs the search f (f.Search is set) for reader; explain is
	// nil unless the query asked for it.
	Search(ctx context.Context, reader string, f snowclaw.Filter) (evs []*nostr.Event, explain []snowclaw.ExplainRow, err error)
	// MatchLive reports whether a new event matches a live search q.
	MatchLive(q snowclaw.SearchQuery, evt *snowclaw.Event) bool
}

// UseSearch turns NIP-50 on, answered by s. Call it before serving.
func (r *Relay) UseSearch(s Searcher) {
	r.search = s // and NIP-11 lists 50
}

// RejectSearchOff refuses NIP-50 filters while search is off.
func (r *Relay) RejectSearchOff(_ context.Context, f snowclaw.Filter) error {
	if f.Search != nil && r.search == nil {
		return snowclaw.Unsupported("search (NIP-50) is turned off on this relay")
	}
	return nil
}

// Search runs the NIP-50 search f for reader through the relay, which
// counts and times it with the websocket's (metrics.go): the HTTP API and
// MCP search through it.
func (r *Relay) Search(ctx context.Context, reader string, f snowclaw.Filter) ([]*nostr.Event, []snowclaw.ExplainRow, error) {
	if f.Search == nil {
		return nil, nil, snowclaw.Invalid("not a search: the search field is empty")
	}
	r.met.query(querySearch)
	start := time.Now()
	evs, explain, err := r.search.Search(ctx, reader, f)
	r.met.search.observe(time.Since(start))
	return evs, explain, err
}
