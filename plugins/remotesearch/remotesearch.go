// Package remotesearch is the layered memory search across relays
// (docs/remote.md):
// a search that asks for it (include:remote) is answered from the local
// index first and from the remote relays of [memory.remote] too, each
// remote result verified, deduplicated, ranked with the local engine's
// fusion and multiplied by its remote's trust, and marked with where it
// came from. It also lists the agents the remotes know (agents.go).
//
// Remote results are another relay's public data: they are held in RAM
// only (a bounded cache with a TTL), never written to the local store or
// index, pass the local read rule like local results, and never take a
// local result's place. Whether a search is sent to the remotes at all,
// and what of it, is outgoing.go's one rule; what a remote may have
// served here is fetch.go's servable. A slow or dead remote costs a search at most its
// timeout; its failures are counted on /metrics.
package remotesearch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/nbd-wtf/go-nostr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/plugins/memsearch"
	"github.com/snowclaw/snowclaw/search"
	"golang.org/x/sync/singleflight"
)

// Remote is one relay searched remotely and the trust its results are
// multiplied by.
type Remote struct {
	URL   string  // ws:// or wss://
	Trust float64 // > 0; 1 ranks a remote hit as an equal local one
}

// Options configure the layer. Zero values take the defaults in
// parentheses.
type Options struct {
	Remotes []Remote
	// Timeout bounds one remote's part of a search: NIP-11, connecting,
	// waiting for a free slot and the answer (3s).
	Timeout time.Duration
	// Concurrency is how many remote requests run at once, over all
	// searches (4).
	Concurrency int
	// CacheTTL and CacheEntries bound the RAM cache of remote answers
	// (5m, 256 answers).
	CacheTTL     time.Duration
	CacheEntries int
	// PerRemote is the number of events asked of each remote (50).
	PerRemote int
	// DefaultLimit and MaxLimit are the local search's (search.DefaultLimit, 100).
	DefaultLimit, MaxLimit int

	// Local is the local index, asked first; its trust table weighs
	// remote results too. Ranking is its fusion (search.Options: the
	// weights, RRF constant, embedder, recency).
	Local   *memsearch.Plugin
	Ranking search.Options
	// CanRead is the local read rule, applied to remote results as to
	// local ones.
	CanRead func(reader string, evt *nostr.Event) bool
	// Stored queries this relay's store, every event (the read rule is
	// CanRead's): a remote version of an address stored here stands only
	// when it is newer (stored.go).
	Stored func(ctx context.Context, f nostr.Filter, fn func(*nostr.Event) bool) error
	// Gone are the local checks of what must stay gone (the relay's
	// deletions, the rights service's erasures): a remote result one of
	// them refuses is dropped.
	Gone []func(context.Context, *snowclaw.Event) error

	HTTPClient *http.Client // NIP-11 requests; nil: http.DefaultClient
	Metrics    prometheus.Registerer
	Logger     *slog.Logger
}

// rest is how long a remote that failed is left out before it is asked
// again, so a dead remote does not cost every search its timeout.
const rest = 30 * time.Second

// nipsTTL is how long a remote's NIP-11 answer is kept.
const nipsTTL = time.Hour

// Layer is the layered search.
type Layer struct {
	o       Options
	log     *slog.Logger
	remotes []*remote
	slots   chan struct{}
	cache   *expirable.LRU[string, []*nostr.Event]
	agents  *expirable.LRU[string, []*nostr.Event]
	met     *metrics
	now     func() time.Time
	flight  singleflight.Group // identical cache misses in flight (fetch.go ask)
}

type remote struct {
	Remote
	mu        sync.Mutex
	nips      map[int]bool
	nipsAt    time.Time
	nipsTold  bool // a NIP-11 problem was logged (nipsTrouble)
	downUntil time.Time
	seen      seen // what its requests said (status.go)
}

// New builds the layer; it connects to nothing until a search asks.
func New(o Options) (*Layer, error) {
	if o.Local == nil || o.CanRead == nil || o.Stored == nil {
		return nil, errors.New("remotesearch: Local, CanRead and Stored are required")
	}
	if len(o.Remotes) == 0 {
		return nil, errors.New("remotesearch: no remotes")
	}
	if o.Timeout <= 0 {
		o.Timeout = 3 * time.Second
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.CacheTTL <= 0 {
		o.CacheTTL = 5 * time.Minute
	}
	if o.CacheEntries <= 0 {
		o.CacheEntries = 256
	}
	if o.PerRemote <= 0 {
		o.PerRemote = 50
	}
	if o.DefaultLimit <= 0 {
		o.DefaultLimit = search.DefaultLimit
	}
	if o.MaxLimit <= 0 {
		o.MaxLimit = 100
	}
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	l := &Layer{o: o, log: o.Logger, slots: make(chan struct{}, o.Concurrency), now: time.Now}
	seen := map[string]bool{}
	for _, r := range o.Remotes {
		if err := CheckRemote(r); err != nil {
			return nil, err
		}
		if seen[r.URL] {
			return nil, fmt.Errorf("remotesearch: %s listed twice", r.URL)
		}
		seen[r.URL] = true
		l.remotes = append(l.remotes, &remote{Remote: r})
	}
	var err error
	if l.met, err = newMetrics(o.Metrics); err != nil {
		return nil, err
	}
	l.cache = expirable.NewLRU[string, []*nostr.Event](o.CacheEntries, nil, o.CacheTTL)
	l.agents = expirable.NewLRU[string, []*nostr.Event](len(o.Remotes), nil, o.CacheTTL)
	// once, at start: which relays a search with include:remote may ask
	// is the operator's choice and should be visible where they look
	remotes := make([]any, 0, len(l.remotes))
	for _, r := range l.remotes {
		remotes = append(remotes, slog.Float64(r.URL, r.Trust))
	}
	l.log.Info("remote search: relays asked by searches with include:remote (URL = trust)",
		slog.Group("remotes", remotes...), "timeout", o.Timeout, "cache_ttl", o.CacheTTL)
	return l, nil
}

// CheckRemote is the one rule for a remote's URL and trust (the config
// validates with it).
func CheckRemote(r Remote) error {
	u, err := url.Parse(r.URL)
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" || u.User != nil || u.Fragment != "" {
		return fmt.Errorf("remotesearch: %q is not a ws:// or wss:// relay URL", r.URL)
	}
	if !(r.Trust > 0) || r.Trust > 10 {
		return fmt.Errorf("remotesearch: %s: trust must be in (0, 10], got %v", r.URL, r.Trust)
	}
	return nil
}
