// Package httpapi is every HTTP surface of the relay besides the
// websocket and NIP-11: one JSON API under /api/v1 (docs/api.md), GET
// /metrics, MCP at /mcp and the web UI at /ui/.
//
// Under /api/v1: the memory routes any key may call (search, memories,
// export, agents, trust, conflicts), the owner's routes over the agent's
// memory (/api/v1/agent/…) and each person's rights (/api/v1/privacy/…).
// The paths of older releases, /api/agent/… and /api/privacy/…, answer
// 308 Permanent Redirect to their new place, so a client that follows
// redirects keeps its method and body; NIP-98 signs the URL, so such a
// client must sign the new one (a header signed for the old path is
// refused there). /api/privacy/export goes to the one export route,
// /api/v1/export.
//
// Health: GET /api/v1/health is the API's answer (version, keys, what is
// on, "starting" while the search index loads, and with a signature what
// the caller sees). The relay keeps GET /healthz apart from it on
// purpose: a bare liveness answer, which neither signs nor needs the
// details; GET /readyz (ready.go) is the readiness answer load balancers
// and container health checks ask.
//
// Every request authenticates on its own (NIP-98, replay-checked; a
// bearer token for /mcp and /metrics where configured), so CORS is open
// under /api/v1: no cookie or ambient credential is at risk. Errors carry
// their NIP-01 prefix in {"error": …} and map to a status (errors.go).
// The memory itself is plugins/memory's Service; this package only
// decodes, authenticates and encodes.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/snowclaw/snowclaw/agent"
	"github.com/snowclaw/snowclaw/internal/httpjson"
	"github.com/snowclaw/snowclaw/plugins/memory"
	"github.com/snowclaw/snowclaw/plugins/memsearch"
	"github.com/snowclaw/snowclaw/plugins/remotesearch"
	"github.com/snowclaw/snowclaw/plugins/rights"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/relay"
	"github.com/snowclaw/snowclaw/relay/clock"
)

// Relay is what the API asks of the relay (relay/exports.go): its keys,
// its one rule for which URLs and hosts name it, the client address
// behind trusted proxies, and its counters.
type Relay interface {
	Identities() policies.Identities
	// NamesRelay: the scheme and host of a signed URL name this relay as
	// req reached it (the rule NIP-42 uses too).
	NamesRelay(req *http.Request, signed *url.URL) bool
	// ServesHost: with a public URL configured, only its host (or
	// loopback) is served; PublicHost is that host, "" without one.
	ServesHost(host string) bool
	PublicHost() string
	BehindProxy() bool
	ClientIP(req *http.Request) string
	Connections() int
	DiskFull() bool
	// Disk measures the data volume now, for the owner's status.
	Disk() relay.DiskStatus
	// FeedLag is how far this instance is behind the shared store's
	// change log; false without a shared store.
	FeedLag(ctx context.Context) (relay.FeedLag, bool, error)
	CountAPICall()
	// Metrics is the relay's registry (with its instance label) for the
	// index's and the agent's series; Gatherer serves them all.
	Metrics() prometheus.Registerer
	Gatherer() prometheus.Gatherer
}

// Options wire the API to its components.
type Options struct {
	Relay  Relay
	Memory *memory.Service
	Rights *rights.Service
	Agent  *agent.Agent      // nil: the agent is off
	Index  *memsearch.Plugin // nil: search is off
	// GroupKeys is the encrypted groups' key status (nil: none shown).
	GroupKeys GroupKeys
	// Remotes reports the remote relays' health for the owner's status
	// (nil: no remotes configured, or search is off).
	Remotes func() []remotesearch.RemoteStatus

	MCP          MCPOptions
	MetricsToken string // bearer token for GET /metrics; "" = only the owner over NIP-98
	// UseOnce, when set, is where NIP-98 authorizations are recorded as
	// used for every instance sharing the store (relay/store/postgres);
	// this instance's own cache is checked first either way.
	UseOnce func(ctx context.Context, id string, until time.Time) (bool, error)
	// Leading reports whether the agent runs here (nil: always, a relay
	// alone on its store); the agent's owner routes answer 503 elsewhere.
	Leading func() bool
	// Clock is the cluster's clock (relay/clock): NIP-98 windows are
	// judged by it, and health reports its offset. nil is the wall
	// clock, for a relay alone on its store.
	Clock   *clock.Clock
	Version string
	Logger  *slog.Logger
}

// API serves the HTTP routes.
type API struct {
	o       Options
	ids     policies.Identities
	log     *slog.Logger
	replays replayCache  // NIP-98 event ids already used (nip98_replay.go)
	metrics http.Handler // GET /metrics once authenticated (metrics.go)
}

// New builds the API; Routes mounts it.
func New(o Options) *API {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = clock.New(time.Now, nil, 0, nil)
	}
	a := &API{o: o, ids: o.Relay.Identities(), log: o.Logger}
	a.registerMetrics()
	return a
}

// Routes registers every route on mux.
func (a *API) Routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /readyz", a.serveReady)
	a.v1Routes(mux)
	a.memoryRoutes(mux)
	a.agentRoutes(mux)
	a.privacyRoutes(mux)
	a.groupKeyRoutes(mux)
	a.statusRoutes(mux)
	a.mcpRoutes(mux)
	a.uiRoutes(mux)
	a.movedRoutes(mux)
}

var (
	writeJSON  = httpjson.WriteJSON
	writeError = httpjson.WriteError
)

const maxAPIBody = httpjson.MaxBody
