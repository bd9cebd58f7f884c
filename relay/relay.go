// Package relay is the Snowclaw relay's Nostr protocol: connections,
// subscriptions and fan-out, NIP-11, NIP-42, NIP-09, NIP-40 and NIP-45,
// the write pipeline (hook slices, the replace guard, tombstones) and the
// read path, over the event store of relay/store, and the HTTP server
// that serves it. The pipeline is our own (pipeline.go), in khatru's
// style of hook slices, so that the store's exact answers, the replace
// guard and the fan-out registry (subs.go) are ours to get right.
package relay

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/internal/nostrsig"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/relay/store"
)

// Options configure the relay: the protocol and nothing built around it.
// cmd/snowclaw fills them from defaults, the config file, the
// environment and flags (through node.Options).
type Options struct {
	DataDir     string // the data directory: its volume is the one kept from filling up
	ServiceURL  string // public ws(s):// URL behind a proxy; NIP-42 checks against it
	Name        string
	Description string
	Contact     string
	Icon        string
	Banner      string
	Version     string
	// PostingPolicy, PrivacyPolicy and TermsOfService are URLs shown in
	// NIP-11; empty ones are left out.
	PostingPolicy  string
	PrivacyPolicy  string
	TermsOfService string

	// InstanceID names this process among several sharing one store
	// (docs/scaling.md): the agent's leader election records it, so the
	// instances standing by can say which one runs the agent. The relay
	// itself does not use it (metrics carry no instance label: the
	// scraper adds its own). cmd/snowclaw defaults it to the host name.
	InstanceID string

	Owner string // hex; may be empty
	Keys  Keys

	// Groups is the NIP-29 state the read rule consults (plugins/groups);
	// nil: no groups.
	Groups policies.GroupView

	Limits          policies.Limits
	MaxMessageBytes int64 // websocket frame limit; above it the connection is closed
	EventRateIP     policies.Rate
	EventRatePubkey policies.Rate
	FilterRateIP    policies.Rate
	ConnRateIP      policies.Rate

	// MinFreeMB is the free space (MiB) kept on the data directory's
	// volume: below it new events are refused with "error: disk full"
	// (diskguard.go). It is raised to what the store writes at once on
	// its own (store.MinFreeMB) when lower. 0 = unguarded.
	MinFreeMB int

	// HTTP is the connection side: trusted proxies, timeouts, body and
	// send-queue caps (httpserver.go).
	HTTP HTTPOptions

	// Clock is the time NIP-40 expiry and the created_at limits are read
	// against, on every read and write path and in the sweep; nil is the
	// wall clock. Tests move it instead of waiting for seconds to pass.
	Clock func() time.Time
	// ClockCheck, when set, is asked before every write: a refusal
	// (retryable) when Clock may be too far off to decide by (a shared
	// store's clock not read yet, or only within a wide error).
	ClockCheck func() error

	Logger *slog.Logger
}

// Relay is a running Snowclaw relay.
type Relay struct {
	Hooks // the write and read hooks (pipeline.go)

	opts   Options
	log    *slog.Logger
	mux    *http.ServeMux // every plain HTTP route (http.go)
	expiry *expiry
	stop   context.CancelFunc // ends the expiry sweep
	store  *store.Exact       // badger, answering exactly (store/exact.go)
	vis    *policies.Visibility
	ids    policies.Identities
	guard  writeGuard
	subs   *registry
	sigs   *nostrsig.Verifier // ids and signatures, authors' keys cached (conn.go)
	tombs  *tombstones
	search Searcher // nil while search is off (UseSearch)
	met    *metrics // series for GET /metrics (metrics.go)
	disk   *diskGuard
	follow *follower // the shared store's change log; nil with badger (follow.go)

	maxMessage int64
	connLimit  func(ip string) bool
}

// New builds the relay over st, an opened event store (store.OpenBadger)
// that the caller closes after Close, and loads the deletions from it.
// It attaches no rule: whoever assembles the relay (cmd/snowclaw's node)
// appends the rules and plugins to its hooks, in order, before serving.
func New(ctx context.Context, st *store.Exact, opts Options) (*Relay, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	opts.Limits = withConnDefaults(opts.Limits)
	ids, err := opts.Keys.Identities(opts.Owner)
	if err != nil {
		return nil, err
	}
	r := &Relay{
		opts:   opts,
		log:    opts.Logger,
		mux:    http.NewServeMux(),
		expiry: newExpiry(),
		store:  st,
		ids:    ids,
		vis:    &policies.Visibility{IDs: ids, Groups: opts.Groups},
		subs:   newRegistry(),
		sigs:   nostrsig.New(sigKeyCache),
		disk:   newDiskGuard(opts, st),
		tombs:  newTombstones(),
		met:    newMetrics(opts.Version),
	}
	r.met.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "snowclaw_connections", Help: "Open websocket connections.",
	}, func() float64 { return float64(r.Connections()) }), prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "snowclaw_subscriptions", Help: "Open REQ subscriptions on every websocket connection.",
	}, func() float64 { return float64(r.subs.open()) }))
	r.maxMessage = r.opts.MaxMessageBytes
	if r.maxMessage <= 0 {
		r.maxMessage = 512 * 1024
	}
	r.routes()
	r.connLimit = policies.ConnectionRateLimit(r.opts.ConnRateIP)
	if err := r.openFeed(ctx); err != nil {
		return nil, fmt.Errorf("reading the shared store's change log: %w", err)
	}
	r.registerFeedMetrics()
	if err := r.tombs.load(ctx, r); err != nil {
		return nil, fmt.Errorf("loading deletions: %w", err)
	}
	sweepCtx, stop := context.WithCancel(context.Background())
	r.stop = stop
	go r.expiry.run(sweepCtx, r)
	if opts.Owner == "" {
		r.log.Warn("no owner configured: config events (snowclaw:config:*) are refused from everyone; set owner in the config file, SNOWCLAW_OWNER or --owner")
	}
	return r, nil
}

// RejectOverLimits applies the size and time limits to every event, the
// relay's own included (its group metadata is cut to fit).
func (r *Relay) RejectOverLimits(_ context.Context, evt *snowclaw.Event) error {
	return r.opts.Limits.RejectEventAt(evt, r.now())
}

// now is the relay's clock (Options.Clock), in NIP-01 seconds.
func (r *Relay) now() nostr.Timestamp { return nostr.Timestamp(r.opts.Clock().Unix()) }

// Identities returns the owner, relay and agent public keys.
func (r *Relay) Identities() policies.Identities { return r.ids }

// canRead is the read rule as a yes/no, expiry included.
func (r *Relay) canRead(reader string, evt *snowclaw.Event) bool {
	if evt.Expired(r.now()) {
		return false
	}
	ok, _ := r.vis.CanRead(reader, evt)
	return ok
}

// Close stops the relay's own background work (the expiry sweep). Call
// it after Serve has returned and after whatever publishes through the
// relay (the agent) has stopped; the store is closed after it, by
// whoever opened it.
func (r *Relay) Close() error {
	r.StopFollowing()
	r.stop()
	return nil
}
