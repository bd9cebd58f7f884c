package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/plugins/rights"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/relay"
)

// The HTTP JSON API v1 core (docs/api.md, "Core endpoints"): thin
// handlers over the memory service bound to the caller (the same
// snowclaw.MemoryBackend MCP is given). Every route but health needs
// NIP-98; the signer is the reader and sees what REQ would show that key.
// CORS is open: the API is meant for browsers (the web UI) and tools on
// other origins, and every request carries its own signature, so no
// cookie or ambient credential is at risk.
func (a *API) v1Routes(mux *http.ServeMux) {
	mux.HandleFunc("OPTIONS /api/v1/", cors(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	mux.HandleFunc("OPTIONS /metrics", cors(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	mux.HandleFunc("GET /metrics", cors(a.serveMetrics))
	mux.HandleFunc("GET /api/v1/health", cors(a.v1Health))
	mux.HandleFunc("GET /api/v1/search", a.v1(a.v1Search))
	mux.HandleFunc("GET /api/v1/memories", a.v1(a.v1List))
	mux.HandleFunc("GET /api/v1/memories/{id}", a.v1(a.v1Get))
	mux.HandleFunc("POST /api/v1/memories", a.v1(a.v1Store))
	mux.HandleFunc("DELETE /api/v1/memories/{id}", a.v1(a.v1Forget))
	mux.HandleFunc("GET /api/v1/export", cors(a.countAPI(a.personal(a.v1Export))))
}

// cors lets any origin call the API with an Authorization header; it also
// answers for the other /api/v1 route files that wrap their handlers in it.
func cors(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		hd := w.Header()
		hd.Set("Access-Control-Allow-Origin", "*")
		hd.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
		hd.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
		hd.Set("Access-Control-Max-Age", "600")
		h(w, req)
	}
}

func (a *API) countAPI(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		a.o.Relay.CountAPICall()
		h(w, req)
	}
}

// v1 wraps a handler with CORS, the API counter and NIP-98: no valid
// signature, no answer (401).
func (a *API) v1(h func(w http.ResponseWriter, req *http.Request, reader string)) http.HandlerFunc {
	return cors(a.countAPI(func(w http.ResponseWriter, req *http.Request) {
		reader, err := a.auth(req)
		if err != nil {
			w.Header().Set("WWW-Authenticate", "Nostr")
			writeError(w, http.StatusUnauthorized, err.Error())
			return
		}
		h(w, req, reader)
	}))
}

// health is public; a valid signature adds who you are and what you see.
type health struct {
	Status  string         `json:"status"`
	Version string         `json:"version"`
	Relay   string         `json:"relay"`
	Agent   string         `json:"agent"`
	Owner   string         `json:"owner"`
	Search  bool           `json:"search"`
	AgentOn bool           `json:"agent_enabled"`
	You     string         `json:"you,omitempty"`
	Counts  map[string]int `json:"counts,omitempty"`

	// SearchRebuilding: the index is being rebuilt after damage; searches
	// answer "error: search index is being rebuilt" until it is false.
	SearchRebuilding bool `json:"search_rebuilding"`
	// SearchLoading: while Status is "starting" (or "failed"), how far
	// the index's load at start got (ready.go).
	SearchLoading *searchLoad `json:"search_loading,omitempty"`
	// DiskFull: the data volume is below its reserve ([store]
	// min_free_mb); new events are refused with "error: disk full".
	DiskFull bool `json:"disk_full"`
	// Feed: over a shared store, how far this instance is behind the
	// change log. Past a couple of seconds its reads and writes are
	// refused with "error: … try again" and status is "behind" (503).
	Feed *relay.FeedLag `json:"feed,omitempty"`
	// Clock: over a shared store, this instance's clock against the
	// store's, which it dates and judges by. When the offset is not known
	// within the bound, time-dependent decisions are refused with
	// "error: … try again" and status is "clock" (503).
	Clock *clockStatus `json:"clock,omitempty"`
}

type clockStatus struct {
	OffsetSeconds float64 `json:"offset_seconds"` // the store's time minus this instance's
	ErrorSeconds  float64 `json:"error_seconds"`  // how far the estimate may be off
	Synced        bool    `json:"synced"`
}

func (a *API) v1Health(w http.ResponseWriter, req *http.Request) {
	h := health{Status: "ok", Version: a.o.Version, Relay: a.ids.Relay, Agent: a.ids.Agent, Owner: a.ids.Owner,
		Search: a.o.Index != nil, SearchRebuilding: a.o.Index != nil && a.o.Index.Rebuilding(), AgentOn: a.o.Agent != nil,
		DiskFull: a.o.Relay.DiskFull()}
	status := http.StatusOK
	if s, load := a.readiness(); s != "ready" {
		h.Status, h.SearchLoading = s, load
	}
	if lag, shared, err := a.o.Relay.FeedLag(req.Context()); shared {
		if err != nil {
			lag.Stopped = true // the log cannot be read: nothing can be proved current
		}
		h.Feed = &lag
		if !lag.Healthy() {
			h.Status, status = "behind", http.StatusServiceUnavailable
		}
		off, e, ok := a.o.Clock.Offset()
		h.Clock = &clockStatus{OffsetSeconds: off.Seconds(), ErrorSeconds: e.Seconds(), Synced: ok}
		if a.o.Clock.Check() != nil && h.Status == "ok" {
			h.Status, status = "clock", http.StatusServiceUnavailable
		}
	}
	if req.Header.Get("Authorization") != "" {
		if you, err := a.auth(req); err == nil {
			h.You = you
			h.Counts = map[string]int{}
			if you == a.ids.Owner || a.ids.IsSystem(you) {
				// relay-wide activity is the operator's business
				h.Counts["connections"] = a.o.Relay.Connections()
			}
			if n, err := a.o.Memory.CountFor(req.Context(), you); err == nil {
				h.Counts["memories"] = n
			}
			if a.o.Index != nil {
				// only the docs this reader may read: a total would tell
				// them when others store what they cannot see
				h.Counts["index_docs"] = a.o.Index.CountFor(you)
			}
		}
	}
	writeJSON(w, status, h)
}

func (a *API) v1Search(w http.ResponseWriter, req *http.Request, reader string) {
	q := req.URL.Query()
	sr := snowclaw.SearchRequest{Query: q.Get("q"), Explain: flag(q.Get("explain")), Remote: flag(q.Get("remote"))}
	var err error
	if sr.Limit, err = intParam(q.Get("limit")); err != nil {
		a.writeErr(w, snowclaw.Invalid("limit: %v", err))
		return
	}
	for _, k := range strings.FieldsFunc(q.Get("kinds"), func(c rune) bool { return c == ',' || c == ' ' }) {
		n, err := strconv.Atoi(k)
		if err != nil || n < 0 || n > 65535 {
			a.writeErr(w, snowclaw.Invalid("kinds: %q is not an event kind", k))
			return
		}
		sr.Kinds = append(sr.Kinds, n)
	}
	resp, err := a.o.Memory.For(reader).Search(req.Context(), sr)
	if err != nil {
		a.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (a *API) v1List(w http.ResponseWriter, req *http.Request, reader string) {
	q := req.URL.Query()
	lr := snowclaw.ListRequest{
		Tier: snowclaw.Tier(q.Get("tier")), Topic: q.Get("topic"), Source: q.Get("source"), Group: q.Get("group"),
		IncludeSuperseded: flag(q.Get("include_superseded")),
	}
	var err error
	if lr.Limit, err = intParam(q.Get("limit")); err != nil {
		a.writeErr(w, snowclaw.Invalid("limit: %v", err))
		return
	}
	until, err := intParam(q.Get("until"))
	if err != nil {
		a.writeErr(w, snowclaw.Invalid("until (unix seconds): %v", err))
		return
	}
	lr.Until = int64(until)
	list, err := a.o.Memory.For(reader).List(req.Context(), lr)
	if err != nil {
		a.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"memories": list})
}

func (a *API) v1Get(w http.ResponseWriter, req *http.Request, reader string) {
	d, err := a.o.Memory.For(reader).Get(req.Context(), req.PathValue("id"))
	if err != nil {
		a.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (a *API) v1Store(w http.ResponseWriter, req *http.Request, reader string) {
	var sr snowclaw.StoreRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, req.Body, maxAPIBody))
	if err := dec.Decode(&sr); err != nil {
		a.writeErr(w, snowclaw.Invalid("the body is not a StoreRequest: %v", err))
		return
	}
	// the caller's address and key, so the per-IP and per-key write
	// limits hold for the API as for a websocket client
	ctx := policies.WithConn(req.Context(), &policies.Conn{IP: a.o.Relay.ClientIP(req), Reader: func() string { return reader }})
	mv, err := a.o.Memory.For(reader).Store(ctx, sr)
	if err != nil {
		a.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"memory": mv})
}

func (a *API) v1Forget(w http.ResponseWriter, req *http.Request, reader string) {
	res, err := a.o.Memory.For(reader).Forget(req.Context(), req.PathValue("id"))
	if err != nil {
		a.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// v1Export is the privacy export (docs/privacy.md) under the v1 path; the
// personal wrapper authenticates and lets the owner name a person.
func (a *API) v1Export(w http.ResponseWriter, req *http.Request, who rights.Request, b privacyBody) {
	switch req.URL.Query().Get("format") {
	case "", "json", "markdown":
	default:
		a.writeErr(w, snowclaw.Invalid("format is json or markdown"))
		return
	}
	a.apiExport(w, req, who, b)
}

func flag(s string) bool {
	switch strings.ToLower(s) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// intParam reads an optional non-negative integer query parameter.
func intParam(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a non-negative integer", s)
	}
	return n, nil
}
