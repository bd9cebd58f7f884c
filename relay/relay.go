// Package relay is the Snowclaw relay's Nostr protocol: connections,
// subscriptions and fan-out, NIP-11, NIP-42, NIP-09, NIP-40 and NIP-45,
// the write pipeline (hook slices, the replace guard, tombstones) and the
// read path, over the event store of relay/store, and the HTTP server
// that serves it. The pipeline is our own (pipeline.go), khatru-like in
// its hooks; khatru itself is no longer used.
package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip11"
	"github.com/snowclaw/snowclaw/agent"
	"github.com/snowclaw/snowclaw/agent/dynconfig"
	"github.com/snowclaw/snowclaw/agent/llm"
	"github.com/snowclaw/snowclaw/plugins/groups"
	"github.com/snowclaw/snowclaw/plugins/httpapi"
	"github.com/snowclaw/snowclaw/plugins/memsearch"
	"github.com/snowclaw/snowclaw/plugins/rights"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/relay/store"
)

// Options configure a relay. cmd/snowclaw fills them from defaults, the
// config file, the environment and flags.
type Options struct {
	DataDir     string
	ServiceURL  string // public ws(s):// URL behind a proxy; NIP-42 checks against it
	Name        string
	Description string
	Contact     string
	Icon        string
	Version     string

	Owner string // hex; may be empty
	Keys  Keys

	Limits          policies.Limits
	MaxMessageBytes int64 // websocket frame limit; above it the connection is closed
	EventRateIP     policies.Rate
	EventRatePubkey policies.Rate
	FilterRateIP    policies.Rate
	ConnRateIP      policies.Rate

	// Search, when Enabled, answers NIP-50 filters from an index in
	// Search.Dir (default <data>/search).
	Search SearchOptions

	// Agent configures the resident agent (DESIGN.md §5).
	Agent AgentOptions

	// MCP configures the /mcp endpoint (plugins/httpapi/mcp.go).
	MCP httpapi.MCPOptions

	GroupCreators    []string // hex
	GroupDefaults    policies.GroupInfo
	MaxModerationAge time.Duration

	MetricsToken string // bearer token for GET /metrics; "" = only the owner over NIP-98

	// MinFreeMB is the free space (MiB) kept on the data directory's
	// volume: below it new events are refused with "error: disk full"
	// (diskguard.go). 0 = unguarded.
	MinFreeMB int

	// HTTP is the connection side: trusted proxies, timeouts, body and
	// send-queue caps (httpserver.go).
	HTTP HTTPOptions

	Logger *slog.Logger
}

// SearchOptions configure NIP-50 search: the index bridge's options, of
// which the relay fills the store, the read rule, the keys and, when
// empty, the directory (<data>/search).
type SearchOptions struct {
	Enabled bool
	memsearch.Options
}

// AgentOptions configure the resident agent; the relay supplies its key,
// the owner, and the publish, query and recall functions.
type AgentOptions struct {
	Enabled       bool
	Name          string
	LLM           llm.Chatter // nil: memory and context only, no replies
	File          dynconfig.Patch
	Instructions  string
	TokenBudget   int
	QueueSize     int
	FlushEvery    int
	FlushInterval time.Duration
	MaxItems      int
	MaxLessons    int
	KnownKeys     []string
}

// Relay is a running Snowclaw relay.
type Relay struct {
	Hooks // the write and read hooks (pipeline.go)

	opts   Options
	log    *slog.Logger
	mux    *http.ServeMux // every plain HTTP route (http.go)
	info   *nip11.RelayInformationDocument
	expiry *expiry
	stop   context.CancelFunc // ends the expiry sweep
	store  *store.Exact       // badger, answering exactly (store/exact.go)
	groups *groups.Groups
	vis    *policies.Visibility
	ids    policies.Identities
	guard  writeGuard
	subs   *registry
	tombs  *tombstones
	mem    *memsearch.Plugin // nil when search is off
	agent  *agent.Agent      // nil when the agent is off
	rights *rights.Service
	audit  *rights.Audit
	met    metrics // counters for GET /metrics (metrics.go)
	disk   *diskGuard

	maxMessage int64
	connLimit  func(ip string) bool
}

// New builds the relay over st, an opened event store (store.OpenBadger)
// that the caller closes after Close, and rebuilds derived state from it.
func New(ctx context.Context, st *store.Exact, opts Options) (*Relay, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	relayPK, err := nostr.GetPublicKey(opts.Keys.RelaySecret)
	if err != nil {
		return nil, fmt.Errorf("relay key: %w", err)
	}
	agentPK, err := nostr.GetPublicKey(opts.Keys.AgentSecret)
	if err != nil {
		return nil, fmt.Errorf("agent key: %w", err)
	}

	r := &Relay{
		opts:   opts,
		log:    opts.Logger,
		mux:    http.NewServeMux(),
		expiry: newExpiry(),
		store:  st,
		ids:    policies.Identities{Owner: opts.Owner, Relay: relayPK, Agent: agentPK},
		subs:   newRegistry(),
		disk:   newDiskGuard(opts.DataDir, opts.MinFreeMB, opts.Logger),
		tombs:  newTombstones(),
	}
	sweepCtx, stop := context.WithCancel(context.Background())
	r.stop = stop
	r.groups = groups.New(groups.Options{
		IDs:              r.ids,
		RelaySecret:      opts.Keys.RelaySecret,
		Creators:         opts.GroupCreators,
		Defaults:         opts.GroupDefaults,
		MaxModerationAge: opts.MaxModerationAge,
		Store:            st,
		Publish:          r.Publish,
		Delete:           r.Delete,
		Logger:           opts.Logger,
	})
	r.vis = &policies.Visibility{IDs: r.ids, Groups: r.groups}
	r.wire()

	if err := r.tombs.load(ctx, r); err != nil {
		stop()
		return nil, fmt.Errorf("loading deletions: %w", err)
	}
	if err := r.groups.Load(ctx); err != nil {
		stop()
		return nil, fmt.Errorf("rebuilding group state: %w", err)
	}
	if opts.Search.Enabled {
		if err := r.openSearch(ctx); err != nil {
			stop()
			return nil, err
		}
	}
	if opts.Agent.Enabled {
		if err := r.newAgent(); err != nil {
			r.Close()
			return nil, err
		}
	}
	if err := r.openRights(); err != nil {
		r.Close()
		return nil, err
	}
	if err := r.openServices(ctx); err != nil {
		r.Close()
		return nil, err
	}
	if r.agent != nil {
		if err := r.agent.Start(ctx); err != nil {
			r.Close()
			return nil, fmt.Errorf("agent: %w", err)
		}
	}
	go r.expiry.run(sweepCtx, r)
	if opts.Owner == "" {
		r.log.Warn("no owner configured: config events (snowclaw:config:*) are refused from everyone; set owner in the config file, SNOWCLAW_OWNER or --owner")
	}
	return r, nil
}

// wire attaches every hook. The order inside each slice is the order of
// the checks: cheap and stateless first.
func (r *Relay) wire() {
	r.maxMessage = r.opts.MaxMessageBytes
	if r.maxMessage <= 0 {
		r.maxMessage = 512 * 1024
	}
	r.info = r.infoDocument()
	r.routes()
	r.connLimit = policies.ConnectionRateLimit(r.opts.ConnRateIP)

	writes := &policies.WriteRules{IDs: r.ids, Groups: r.groups}
	r.RejectEvent = append(r.RejectEvent,
		r.rejectOverLimits,
		policies.EventRateLimit(r.opts.EventRateIP, r.opts.EventRatePubkey, r.ids.IsSystem),
		r.rejectDeleted,
		r.rejectErased,
		r.rejectOlderVersion,
		r.rejectForeignDeletion,
		func(_ context.Context, evt *nostr.Event) error { return writes.Check(evt) },
		r.groups.RejectEvent, // NIP-29 moderation checks
	)
	r.OnEventSaved = append(r.OnEventSaved, r.groups.OnEventSaved, r.applyDeletion)
	r.RejectFilter = append(r.RejectFilter,
		policies.FilterRateLimit(r.opts.FilterRateIP),
		r.opts.Limits.RejectFilter,
		r.rejectSearchOff,
		func(ctx context.Context, f nostr.Filter) error { return r.vis.CheckFilter(policies.ReaderOf(ctx), f) },
	)
}

// rejectOverLimits applies the size and time limits to everyone but the
// relay key, whose metadata may be dated a little ahead (groups plugin).
func (r *Relay) rejectOverLimits(ctx context.Context, evt *nostr.Event) error {
	if evt.PubKey == r.ids.Relay {
		return nil
	}
	return r.opts.Limits.RejectEvent(ctx, evt)
}

// Groups exposes the NIP-29 state (for the agent and tests).
func (r *Relay) Groups() *groups.Groups { return r.groups }

// Identities returns the owner, relay and agent public keys.
func (r *Relay) Identities() policies.Identities { return r.ids }

// openSearch opens (or rebuilds) the index and hooks it to the writes.
func (r *Relay) openSearch(ctx context.Context) error {
	o := r.opts.Search.Options
	if o.Search.Dir == "" {
		o.Search.Dir = filepath.Join(r.opts.DataDir, "search")
	}
	o.AgentPubkey, o.AgentSecret, o.OwnerPubkey = r.ids.Agent, r.opts.Keys.AgentSecret, r.ids.Owner
	o.Store, o.CanRead, o.Logger = r.store, r.canRead, r.log
	mem, err := memsearch.Open(ctx, o)
	if err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	r.mem = mem
	r.OnEventSaved = append(r.OnEventSaved, mem.OnEventSaved)
	r.OnEventDeleted = append(r.OnEventDeleted, mem.OnEventDeleted)
	r.info.AddSupportedNIP(50)
	return nil
}

// canRead is the read rule as a yes/no, expiry included.
func (r *Relay) canRead(reader string, evt *nostr.Event) bool {
	if policies.Expired(evt, nostr.Now()) {
		return false
	}
	ok, _ := r.vis.CanRead(reader, evt)
	return ok
}

// Search exposes the search plugin (nil when search is off).
func (r *Relay) Search() *memsearch.Plugin { return r.mem }

// Close stops the agent and closes the search index and the audit trail.
// Call it after Serve has returned; the store is closed after it, by
// whoever opened it.
func (r *Relay) Close() error {
	r.stop()
	var errs []error
	if r.agent != nil {
		// the agent's last flush goes through the write pipeline, so it
		// runs before the index and the store close
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := r.agent.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("agent: %w", err))
		}
		cancel()
	}
	if r.mem != nil {
		errs = append(errs, r.mem.Close())
	}
	if r.audit != nil {
		errs = append(errs, r.audit.Close())
	}
	return errors.Join(errs...)
}
