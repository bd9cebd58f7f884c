package search

import (
	"strings"

	"github.com/snowclaw/snowclaw"
)

// ParsedQuery is a search as the engine reads it: the query the edge
// parsed (snowclaw.ReadFilter), plus Match over docs. The engine never
// parses a search string itself.
type ParsedQuery struct{ snowclaw.SearchQuery }

// Match reports whether d meets every extension constraint (the free text
// is the ranker's business, not a filter).
func (p ParsedQuery) Match(d Doc) bool {
	if len(p.Tiers) > 0 && !containsFold(p.Tiers, d.Tier) {
		return false
	}
	if len(p.Topics) > 0 && !p.matchTopic(d) {
		return false
	}
	if len(p.Sources) > 0 {
		src := d.Source
		if src == "" {
			src = d.Pubkey
		}
		if !containsFold(p.Sources, src) && !containsFold(p.Sources, d.Pubkey) {
			return false
		}
	}
	if len(p.Models) > 0 {
		ok := false
		for _, m := range p.Models {
			if hit, _ := matchGlob(m, d.Model); hit && d.Model != "" {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if len(p.Groups) > 0 && !contains(p.Groups, d.Group) {
		return false
	}
	if p.Since > 0 && d.CreatedAt < p.Since {
		return false
	}
	if p.Until > 0 && d.CreatedAt > p.Until {
		return false
	}
	if p.MinConfidence > 0 && d.Confidence < p.MinConfidence {
		return false
	}
	return true
}

// matchTopic: a topic matches itself and everything below it
// ("project/x" matches "project/x/decisions"), and any t tag equal to it.
func (p ParsedQuery) matchTopic(d Doc) bool {
	for _, t := range p.Topics {
		t = strings.TrimSuffix(t, "/")
		if d.Topic == t || strings.HasPrefix(d.Topic, t+"/") {
			return true
		}
		if containsFold(d.Tags["t"], t) {
			return true
		}
	}
	return false
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func containsFold(xs []string, s string) bool {
	for _, x := range xs {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
