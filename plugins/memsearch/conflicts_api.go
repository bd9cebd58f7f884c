package memsearch

import "github.com/snowclaw/snowclaw/search"

// The ranking controls the relay's HTTP API needs (trust, agent directory,
// conflict dashboard), without handing out the index itself: a caller
// with the index could search around the read rule.

// SetSources replaces the owner's live source weights (the preference
// list, docs/api.md#the-source-preference-list-owner-config) on top of the configured ones; ranking and conflict
// order use them from the next search on.
func (p *Plugin) SetSources(weights map[string]float64) error {
	return p.ix.SetSources(weights)
}

// Trust is the trust configuration ranking uses right now.
func (p *Plugin) Trust() search.TrustTable {
	return p.ix.Trust()
}
