package memsearch

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/search"
)

// Query answers a search filter as the edge parsed it: ranked by the
// index, with the rest of the filter, the query's extensions and the read
// rule applied before the limit. Results are in descending relevance;
// explain is filled when the query asks for it (f.Search.Explain).
func (p *Plugin) Query(ctx context.Context, reader string, f snowclaw.Filter) (events []*nostr.Event, explain []snowclaw.ExplainRow, err error) {
	if err := p.usable(); err != nil {
		return nil, nil, err
	}
	p.flush(ctx) // read your writes: every OK'd event is searchable
	pq := search.ParsedQuery{SearchQuery: f.Query()}
	wantExplain := pq.Explain
	limit := f.Limit
	if limit <= 0 {
		limit = p.opts.DefaultLimit
	}
	if limit > p.opts.MaxLimit {
		limit = p.opts.MaxLimit
	}
	rest := f.Filter
	rest.Limit, rest.LimitZero = 0, false
	res, err := p.ix.Search(ctx, search.Query{
		Text:              pq.Text,
		Limit:             limit,
		Explain:           wantExplain,
		IncludeSuperseded: pq.IncludeSuperseded,
		Readable:          p.readable(reader),
		Accept: func(d search.Doc) bool {
			evt := eventOf(d)
			return pq.Match(d) && rest.Matches(evt) && p.opts.CanRead(reader, evt)
		},
	})
	if err != nil {
		return nil, nil, p.failed(err)
	}
	if len(res) == 0 {
		return nil, nil, nil
	}
	ids := make([]string, len(res))
	for i, r := range res {
		ids[i] = r.Doc.ID
	}
	ch, err := p.opts.Store.QueryEvents(ctx, nostr.Filter{IDs: ids, Limit: len(ids)})
	if err != nil {
		return nil, nil, snowclaw.StoreFailed(err, "loading search results")
	}
	byID := make(map[string]*nostr.Event, len(ids))
	for evt := range ch {
		byID[evt.ID] = evt
	}
	out := make([]*nostr.Event, 0, len(ids))
	for i, id := range ids {
		if evt, ok := byID[id]; ok && p.opts.CanRead(reader, evt) {
			out = append(out, evt)
			if wantExplain && res[i].Explain != nil {
				with, err := p.conflictsWith(reader, res[i].Doc)
				if err != nil {
					return nil, nil, err
				}
				explain = append(explain, snowclaw.ExplainRow{ID: id, Explain: *res[i].Explain, ConflictsWith: with})
			}
		}
	}
	return out, explain, nil
}

// Conflicts lists the topics on which sources disagree (all topics when
// topic is ""), judged among the memories reader may read only: a memory
// the reader may not read neither makes a conflict nor shows in one.
func (p *Plugin) Conflicts(reader, topic string) ([]search.Conflict, error) {
	if err := p.usable(); err != nil {
		return nil, err
	}
	p.flush(context.Background())
	cs, err := p.ix.Conflicts(topic, p.readable(reader), func(d search.Doc) bool {
		return p.opts.CanRead(reader, eventOf(d))
	})
	if err != nil {
		return nil, p.failed(err)
	}
	return cs, nil
}

func (p *Plugin) conflictsWith(reader string, d search.Doc) ([]string, error) {
	if d.Topic == "" {
		return nil, nil
	}
	cs, err := p.Conflicts(reader, d.Topic)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, c := range cs {
		for _, o := range c.Docs {
			if o.ID != d.ID && o.Source != d.Source {
				ids = append(ids, o.ID)
			}
		}
		// the version d replaced, learnt from someone else
		for _, h := range c.History {
			if len(d.Supersedes) > 0 && d.Supersedes[0] == h.ID {
				ids = append(ids, h.ID)
			}
		}
	}
	return ids, nil
}

// MatchLive decides whether a newly stored event goes to a live search
// subscription q: it must be searchable, satisfy the query's extensions
// and pass the relevance floor stored search applies (search.Index.Match),
// so one filter returns the same events live and stored. An empty text
// matches on the extensions alone.
func (p *Plugin) MatchLive(q snowclaw.SearchQuery, evt *snowclaw.Event) bool {
	if p.loading.Load() {
		return false // no live search starts before the index is ready
	}
	pq := search.ParsedQuery{SearchQuery: q}
	doc, ok := p.docOf(evt)
	if !ok || !pq.Match(doc) {
		return false
	}
	_, ok, err := p.ix.Match(context.Background(), pq.Text, doc)
	if err != nil {
		p.log.Warn("matching a live search", "err", err)
		return false
	}
	return ok
}
