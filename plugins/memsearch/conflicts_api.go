package memsearch

import "github.com/snowclaw/snowclaw/search"

// The ranking controls the relay's HTTP API needs (trust, agent directory,
// conflict dashboard), without handing out the index itself: a caller
// with the index could search around the read rule.

// SetSources replaces the owner's live source weights (the preference
// list, docs/api.md#the-source-preference-list-owner-config) on top of the configured ones; ranking and conflict
// order use them from the next search on.
// While the index loads they are checked and kept, and applied when it
// is ready.
func (p *Plugin) SetSources(weights map[string]float64) error {
	p.loadMu.Lock()
	defer p.loadMu.Unlock()
	if !p.loading.Load() {
		return p.ix.SetSources(weights)
	}
	if _, err := search.LiveSources(weights); err != nil {
		return err
	}
	p.sources = &weights
	return nil
}

// Trust is the trust configuration ranking uses right now.
func (p *Plugin) Trust() search.TrustTable {
	p.loadMu.Lock()
	defer p.loadMu.Unlock()
	if !p.loading.Load() {
		return p.ix.Trust()
	}
	var live map[string]float64
	if p.sources != nil {
		live, _ = search.LiveSources(*p.sources) // checked by SetSources
	}
	t, _ := search.TrustOf(p.opts.Search, live) // the options were checked by newPlugin
	return t
}
