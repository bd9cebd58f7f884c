package main

import (
	"sort"
	"time"

	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/plugins/remotesearch"
)

// RemoteConfig is [memory.remote]: the layered search across relays
// (docs/remote.md, plugins/remotesearch). Nothing is asked of a remote unless a
// search says include:remote (or agent_default for the agent's public
// replies).
type RemoteConfig struct {
	// Relays: a remote relay's ws:// or wss:// URL to the trust its
	// results are multiplied by.
	Relays       WeightMap `toml:"relays"`
	Timeout      Duration  `toml:"timeout"`
	Concurrency  int       `toml:"concurrency"`
	CacheTTL     Duration  `toml:"cache_ttl"`
	CacheEntries int       `toml:"cache_entries"`
	PerRemote    int       `toml:"per_remote"`
	AgentDefault bool      `toml:"agent_default"`
}

func defaultRemote() RemoteConfig {
	return RemoteConfig{Relays: WeightMap{}, Timeout: Duration{3 * time.Second}, Concurrency: 4,
		CacheTTL: Duration{5 * time.Minute}, CacheEntries: 256, PerRemote: 50}
}

func (rc RemoteConfig) validate(bad func(key, format string, args ...any), searchOn bool) {
	for _, u := range rc.sortedURLs() {
		if err := remotesearch.CheckRemote(remotesearch.Remote{URL: u, Trust: rc.Relays[u]}); err != nil {
			bad("memory.remote.relays", "%v", err)
		}
	}
	if len(rc.Relays) > 0 && !searchOn {
		bad("memory.remote.relays", "remote search needs search.enabled: results are ranked with the local index")
	}
	if rc.Timeout.Duration <= 0 || rc.Timeout.Duration > time.Minute {
		bad("memory.remote.timeout", "must be between 0 and 1m, got %s", rc.Timeout.Duration)
	}
	if rc.CacheTTL.Duration <= 0 {
		bad("memory.remote.cache_ttl", "must be positive")
	}
	for key, v := range map[string]int{"memory.remote.concurrency": rc.Concurrency,
		"memory.remote.cache_entries": rc.CacheEntries, "memory.remote.per_remote": rc.PerRemote} {
		if v <= 0 || v > 100000 {
			bad(key, "must be between 1 and 100000, got %d", v)
		}
	}
}

func (rc RemoteConfig) sortedURLs() []string {
	urls := make([]string, 0, len(rc.Relays))
	for u := range rc.Relays {
		urls = append(urls, u)
	}
	sort.Strings(urls)
	return urls
}

// remoteOptions are the remote layer's options from the config; the node
// adds the index, the read rule and the metrics.
func remoteOptions(rc RemoteConfig) node.RemoteOptions {
	o := node.RemoteOptions{AgentDefault: rc.AgentDefault}
	for _, u := range rc.sortedURLs() {
		o.Remotes = append(o.Remotes, remotesearch.Remote{URL: u, Trust: rc.Relays[u]})
	}
	o.Timeout, o.Concurrency = rc.Timeout.Duration, rc.Concurrency
	o.CacheTTL, o.CacheEntries, o.PerRemote = rc.CacheTTL.Duration, rc.CacheEntries, rc.PerRemote
	return o
}
