package mcpserver

import (
	"context"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// searchInput is memory_search's arguments: snowclaw.SearchRequest, with
// "query" taken as an alias of "q", the name MCP inspectors and models
// reach for first.
type searchInput struct {
	Q       string `json:"q,omitempty"`
	Query   string `json:"query,omitempty"`
	Limit   int    `json:"limit,omitempty"`
	Kinds   []int  `json:"kinds,omitempty"`
	Explain bool   `json:"explain,omitempty"`
	Remote  bool   `json:"remote,omitempty"`
}

// request checks the arguments: one query, in q or in query.
func (in searchInput) request() (snowclaw.SearchRequest, error) {
	q, alias := strings.TrimSpace(in.Q), strings.TrimSpace(in.Query)
	switch {
	case q == "" && alias == "":
		return snowclaw.SearchRequest{}, snowclaw.Invalid("q is empty: give words to search for in q (or its alias query)")
	case q != "" && alias != "" && q != alias:
		return snowclaw.SearchRequest{}, snowclaw.Invalid("q and query differ: query is an alias of q, give one of them")
	case q == "":
		q = alias
	}
	return snowclaw.SearchRequest{Query: q, Limit: in.Limit, Kinds: in.Kinds, Explain: in.Explain, Remote: in.Remote}, nil
}

// searchOutput is memory_search's answer: one lean hit per result, best
// first. A model reads every byte of it, so it carries what answers a
// question and where it came from; signatures, raw tags and ciphertext
// stay out (memory_get has a memory's whole event).
type searchOutput struct {
	Query   string      `json:"q"`
	Results []searchHit `json:"results"`
}

type searchHit struct {
	ID   string `json:"id"`
	Kind int    `json:"kind"`
	// Text is the memory's summary (decrypted where the identity may read
	// it), or a message's text; "" with Encrypted when it may not.
	Text      string               `json:"text"`
	Tier      snowclaw.Tier        `json:"tier,omitempty"`
	Topic     string               `json:"topic,omitempty"`
	Group     string               `json:"group,omitempty"`
	Source    string               `json:"source"` // npub
	Score     float64              `json:"score"`  // the ranking's final score; higher is better
	CreatedAt nostr.Timestamp      `json:"created_at"`
	Origin    string               `json:"origin"` // "local", or the remote relay it came from
	Encrypted bool                 `json:"encrypted,omitempty"`
	Explain   *snowclaw.ExplainRow `json:"explain,omitempty"` // the score breakdown, when asked
}

// search runs the query and makes the hits lean. The backend is always
// asked for the breakdown, which is where the score is; it is passed on
// only when the caller asked for it.
func search(ctx context.Context, b Backend, in searchInput) (searchOutput, error) {
	req, err := in.request()
	if err != nil {
		return searchOutput{}, err
	}
	req.Explain = true
	resp, err := b.Search(ctx, req)
	if err != nil {
		return searchOutput{}, err
	}
	out := searchOutput{Query: resp.Query, Results: make([]searchHit, 0, len(resp.Results))}
	for _, h := range resp.Results {
		if h.Event == nil {
			continue
		}
		lh := leanHit(h)
		if in.Explain {
			lh.Explain = h.Explain
		}
		out.Results = append(out.Results, lh)
	}
	return out, nil
}

func leanHit(h snowclaw.SearchHit) searchHit {
	evt := h.Event
	lh := searchHit{ID: evt.ID, Kind: evt.Kind, CreatedAt: evt.CreatedAt, Origin: h.Origin, Score: finalScore(h.Explain)}
	if lh.Origin == "" {
		lh.Origin = snowclaw.OriginLocal
	}
	if m := h.Memory; m != nil {
		lh.Text, lh.Tier, lh.Topic, lh.Group, lh.Source, lh.Encrypted = m.Text, m.Tier, m.Topic, m.Group, m.Source, m.Encrypted
		if lh.Text == "" && m.Context != "" {
			lh.Text = m.Context
		}
		return lh
	}
	e := snowclaw.ReadEvent(evt)
	lh.Tier, lh.Group, lh.Source = e.Tier, e.Group, snowclaw.NpubOf(evt.PubKey)
	if e.D != "" {
		lh.Topic = e.D
	}
	if e.Encrypted {
		lh.Encrypted = true
	} else {
		lh.Text = evt.Content
		if m := snowclaw.DecodeMemory(evt.Content); m.HasSummary() {
			lh.Text = m.Summary
		}
	}
	return lh
}

// finalScore is a hit's final score, 0 without a breakdown.
func finalScore(explain *snowclaw.ExplainRow) float64 {
	if explain == nil {
		return 0
	}
	return explain.Final
}
