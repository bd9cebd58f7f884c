package relay

import (
	"context"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// Searcher answers NIP-50 filters (plugins/memsearch). The relay only
// passes filters through, counts and times them, and sends the explain
// rows, whatever they are, as JSON.
type Searcher interface {
	// Search runs f for reader; explain is nil unless the query asked
	// for it.
	Search(ctx context.Context, reader string, f nostr.Filter) (evs []*nostr.Event, explain any, err error)
	// MatchLive reports whether a new event matches a live search.
	MatchLive(query string, evt *nostr.Event) bool
}

// UseSearch turns NIP-50 on, answered by s. Call it before serving.
func (r *Relay) UseSearch(s Searcher) {
	r.search = s // and NIP-11 lists 50
}

// RejectSearchOff refuses NIP-50 filters while search is off.
func (r *Relay) RejectSearchOff(_ context.Context, f nostr.Filter) error {
	if f.Search != "" && r.search == nil {
		return snowclaw.Unsupported("search (NIP-50) is turned off on this relay")
	}
	return nil
}

// SearchQuery runs a NIP-50 search for reader through the relay, which
// counts and times it with the websocket's (metrics.go): the HTTP API and
// MCP search through it.
func (r *Relay) SearchQuery(ctx context.Context, reader string, f nostr.Filter) ([]*nostr.Event, any, error) {
	r.met.query(querySearch)
	start := time.Now()
	evs, explain, err := r.search.Search(ctx, reader, f)
	r.met.search.observe(time.Since(start))
	return evs, explain, err
}
