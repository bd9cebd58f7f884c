package memory

import (
	"context"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// Search is NIP-50 search for the HTTP API and MCP: the websocket's
// search (same index, same extensions, same read rule for reader) with
// each memory hit decoded as reader may see it, and the score breakdown
// attached to its hit when asked. A search with include:remote
// (plugins/remotesearch) always carries the breakdown, and each hit its
// origin (the websocket sends them only with explain:true). This is the
// edge of the API's searches: req.Query is parsed here, once, and the
// request's switches (explain, remote) set the parsed flags.
func (s *Service) Search(ctx context.Context, reader string, req snowclaw.SearchRequest) (snowclaw.SearchResponse, error) {
	if s.o.Index == nil {
		return snowclaw.SearchResponse{}, snowclaw.Unsupported("search (NIP-50) is turned off on this relay")
	}
	q := strings.TrimSpace(req.Query)
	if q == "" {
		return snowclaw.SearchResponse{}, snowclaw.Invalid("the query is empty")
	}
	if req.Limit < 0 {
		return snowclaw.SearchResponse{}, snowclaw.Invalid("limit cannot be negative")
	}
	pq, err := snowclaw.ParseSearch(q)
	if err != nil {
		return snowclaw.SearchResponse{}, snowclaw.Invalid("search query: %v", err)
	}
	pq.IncludeRemote = pq.IncludeRemote || req.Remote
	// a layered search writes each hit's origin in its explain rows
	pq.Explain = pq.Explain || req.Explain || pq.IncludeRemote
	f := snowclaw.SearchFilter(nostr.Filter{Kinds: req.Kinds, Limit: req.Limit}, pq)
	evs, rows, err := s.o.Query(ctx, reader, f)
	if err != nil {
		return snowclaw.SearchResponse{}, err
	}
	explain := make(map[string]*snowclaw.ExplainRow, len(rows))
	for i := range rows {
		explain[rows[i].ID] = &rows[i]
	}
	v := s.viewerFor(reader)
	resp := snowclaw.SearchResponse{Query: req.Query, Results: make([]snowclaw.SearchHit, 0, len(evs))}
	for _, evt := range evs {
		hit := snowclaw.SearchHit{Event: evt}
		if snowclaw.ReadEvent(evt).IsMemoryItem() {
			mv := v.view(evt)
			hit.Memory = &mv
		}
		if row, ok := explain[evt.ID]; ok {
			hit.Explain = row
			hit.Origin = row.Origin // set in a search with include:remote
		}
		resp.Results = append(resp.Results, hit)
	}
	return resp, nil
}
