package memory

import (
	"context"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/plugins/memsearch"
)

// Search is NIP-50 search for the HTTP API and MCP: the websocket's
// search (same index, same extensions, same read rule for reader) with
// each memory hit decoded as reader may see it, and the score breakdown
// attached to its hit when asked. A search with include:remote
// (plugins/remotesearch) always carries the breakdown, and each hit its
// origin (the websocket sends them only with explain:true).
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
	f := nostr.Filter{Search: q, Kinds: req.Kinds, Limit: req.Limit}
	layered := req.Remote
	if pq, err := snowclaw.ParseSearch(q); err == nil && pq.IncludeRemote {
		layered = true
	}
	if req.Explain || layered {
		// the plugin takes the explain switch as a query extension; a
		// layered search writes each hit's origin in its explain rows
		f.Search += " explain:true"
	}
	if req.Remote {
		f.Search += " include:remote"
	}
	evs, rows, err := s.o.Query(ctx, reader, f)
	if err != nil {
		return snowclaw.SearchResponse{}, err
	}
	explain := make(map[string]memsearch.ExplainRow, len(rows))
	for _, row := range rows {
		explain[row.ID] = row
	}
	v := s.viewerFor(reader)
	resp := snowclaw.SearchResponse{Query: req.Query, Results: make([]snowclaw.SearchHit, 0, len(evs))}
	for _, evt := range evs {
		hit := snowclaw.SearchHit{Event: evt}
		if snowclaw.IsMemoryItem(evt) {
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
