package remotesearch

import (
	"context"
	"sort"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/plugins/memsearch"
	"github.com/snowclaw/snowclaw/search"
)

// OriginLocal marks a result of this relay in a layered search.
const OriginLocal = snowclaw.OriginLocal

// Search answers a NIP-50 filter for reader (relay.Searcher). Without
// include:remote it is the local search, unchanged. With it the local
// index and the remotes are asked at once; the answer waits for the
// remotes at most their timeout. Its explain rows, where each result's
// origin is written, are returned only when the query asked for
// explain:true: the websocket sends them as a NOTICE, and clients show
// NOTICEs to people. The HTTP API and MCP ask for them to mark each hit.
func (l *Layer) Search(ctx context.Context, reader string, f snowclaw.Filter) ([]*nostr.Event, []snowclaw.ExplainRow, error) {
	q := f.Query()
	if !q.IncludeRemote {
		return l.o.Local.Query(ctx, reader, f)
	}
	evs, rows, err := l.Layered(ctx, reader, f)
	if !q.Explain {
		return evs, nil, err
	}
	return evs, rows, err
}

// MatchLive: a live subscription sees this relay's new events only;
// remote results are never pushed.
func (l *Layer) MatchLive(q snowclaw.SearchQuery, evt *snowclaw.Event) bool {
	return l.o.Local.MatchLive(q, evt)
}

// Layered is the search with include:remote, for callers that want the
// rows typed (the agent's recall); its rows, each with its result's
// origin, are always returned. A search that may not leave (outgoing) is
// answered from the local index alone.
func (l *Layer) Layered(ctx context.Context, reader string, f snowclaw.Filter) ([]*nostr.Event, []snowclaw.ExplainRow, error) {
	q := f.Query()
	var remote chan []answer
	if out, why := outgoing(reader, f); why != "" {
		l.log.Debug("layered search answered here only", "why", why)
	} else {
		remote = make(chan []answer, 1)
		rctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() { remote <- l.askAll(rctx, out) }()
	}
	lq := q
	lq.Explain = true // the local scores, to merge by
	evs, rows, err := l.o.Local.Query(ctx, reader, snowclaw.SearchFilter(f.Filter, lq))
	if err != nil {
		return nil, nil, err
	}
	limit := f.Limit
	if limit <= 0 {
		limit = l.o.DefaultLimit
	}
	limit = min(limit, l.o.MaxLimit)
	hits := make([]hit, 0, len(evs))
	byID := make(map[string]snowclaw.ExplainRow, len(rows))
	for _, r := range rows {
		byID[r.ID] = r
	}
	for _, evt := range evs {
		row := byID[evt.ID]
		row.ID, row.Origin = evt.ID, OriginLocal
		hits = append(hits, hit{evt: evt, row: row})
	}
	if remote != nil {
		answers := <-remote
		rh, err := l.rank(ctx, reader, f, q, hits, answers, limit)
		if err != nil {
			return nil, nil, err
		}
		hits = append(hits, rh...)
	}
	// a stable sort: on equal scores local results stay first
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].row.Final > hits[j].row.Final })
	if len(hits) > limit {
		hits = hits[:limit]
	}
	outEvs := make([]*nostr.Event, len(hits))
	outRows := make([]snowclaw.ExplainRow, len(hits))
	for i, h := range hits {
		outEvs[i], outRows[i] = h.evt, h.row
	}
	return outEvs, outRows, nil
}

type hit struct {
	evt *nostr.Event
	row snowclaw.ExplainRow
}

// rank turns the remotes' answers into hits: each event once (from the
// most trusted remote that sent it), none that duplicates or is
// superseded by a local result, one version per address and none older
// than the version stored here (stored.go), only what the
// query's extensions, the REQ's other fields and the local read rule
// admit; ranked in a RAM index with the local fusion and trust, then
// multiplied by the remote's trust.
func (l *Layer) rank(ctx context.Context, reader string, f snowclaw.Filter, q snowclaw.SearchQuery, local []hit, answers []answer, limit int) ([]hit, error) {
	localIDs := map[string]bool{}
	localAddrs := map[string]bool{}
	superseded := map[string]bool{} // remote ids a local result's author replaced
	for _, h := range local {
		localIDs[h.evt.ID] = true
		if h.evt.Kind >= 30000 && h.evt.Kind < 40000 {
			localAddrs[snowclaw.Address(h.evt.Kind, h.evt.PubKey, h.evt.Tags.GetD())] = true
		}
		for _, id := range snowclaw.TagValues(h.evt, snowclaw.TagSupersedes) {
			superseded[h.evt.PubKey+":"+id] = true
		}
	}
	rest := f.Filter
	rest.Limit, rest.LimitZero = 0, false
	pq := search.ParsedQuery{SearchQuery: q}
	type cand struct {
		evt *nostr.Event
		doc search.Doc
		r   *remote
	}
	byID := map[string]cand{}
	byAddr := map[string]string{} // address → id of the version kept
	for _, a := range answers {
		for _, evt := range a.events {
			doc, ok := memsearch.RemoteDoc(evt)
			addr := doc.Address()
			if !ok || localIDs[evt.ID] || localAddrs[addr] || superseded[evt.PubKey+":"+evt.ID] ||
				!rest.Matches(evt) || !pq.Match(doc) || !l.o.CanRead(reader, evt) || l.gone(ctx, evt) {
				continue
			}
			if c, seen := byID[evt.ID]; seen && c.r.Trust >= a.r.Trust {
				continue
			}
			if id, seen := byAddr[addr]; seen && id != evt.ID {
				old := byID[id]
				if !newer(evt, a.r, old.evt, old.r) {
					continue
				}
				delete(byID, id)
			}
			byID[evt.ID] = cand{evt: evt, doc: doc, r: a.r}
			byAddr[addr] = evt.ID
		}
	}
	latest := make(map[string]*nostr.Event, len(byAddr))
	for addr, id := range byAddr {
		latest[addr] = byID[id].evt
	}
	stale, err := l.storedHere(ctx, reader, latest)
	if err != nil {
		return nil, snowclaw.StoreFailed(err, "remote search: local versions")
	}
	for _, id := range stale {
		delete(byID, id)
	}
	if len(byID) == 0 {
		return nil, nil
	}
	ix, err := l.ramIndex()
	if err != nil {
		return nil, snowclaw.Internal("remote search: %v", err)
	}
	defer ix.Close()
	docs := make([]search.Doc, 0, len(byID))
	for _, c := range byID {
		docs = append(docs, c.doc)
	}
	if err := ix.Index(ctx, docs...); err != nil {
		return nil, snowclaw.Internal("remote search: %v", err)
	}
	res, err := ix.Search(ctx, search.Query{Text: q.Text, Limit: limit, Explain: true, IncludeSuperseded: q.IncludeSuperseded})
	if err != nil {
		return nil, snowclaw.Internal("remote search: %v", err)
	}
	out := make([]hit, 0, len(res))
	for _, r := range res {
		c := byID[r.Doc.ID]
		ex := *r.Explain
		ex.Final *= c.r.Trust
		out = append(out, hit{evt: c.evt, row: snowclaw.ExplainRow{ID: c.evt.ID, Explain: ex, Origin: c.r.URL, RemoteTrust: c.r.Trust}})
	}
	return out, nil
}

// newer decides between two versions of one address from remotes: the
// later created_at, then the more trusted remote, then the lower id.
func newer(a *nostr.Event, ar *remote, b *nostr.Event, br *remote) bool {
	switch {
	case a.CreatedAt != b.CreatedAt:
		return a.CreatedAt > b.CreatedAt
	case ar.Trust != br.Trust:
		return ar.Trust > br.Trust
	}
	return a.ID < b.ID
}

// ramIndex is a throwaway index with the local fusion and the local trust
// in effect (the owner's live list included), for one search's remote
// candidates. Nothing of it reaches disk.
func (l *Layer) ramIndex() (*search.Index, error) {
	t := l.o.Local.Trust()
	o := l.o.Ranking
	o.Dir, o.Curators = "", nil // a remote's supersedes hides only its author's docs
	o.Sources, o.ModelTiers, o.DefaultTrust = t.Sources, t.ModelTiers, t.DefaultTrust
	return search.Open(o)
}

// gone reports whether this relay deleted or erased evt: a copy on a
// remote does not bring back what was removed here.
func (l *Layer) gone(ctx context.Context, evt *nostr.Event) bool {
	e := snowclaw.ReadEvent(evt)
	for _, g := range l.o.Gone {
		if g(ctx, e) != nil {
			return true
		}
	}
	return false
}
