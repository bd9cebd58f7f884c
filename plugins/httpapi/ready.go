package httpapi

import "net/http"

// Readiness. The relay serves from the moment it starts (NIP-11, REQ,
// COUNT, EVENT), but its search index may still be loading behind it,
// seconds to minutes on a large index. GET /healthz (the relay's) says the
// process is alive; GET /readyz says whether it answers everything it
// offers: 200 {"status":"ready"} once the index is ready (or search is
// off), 503 with what is loading and how far it got until then, and 503
// {"status":"failed"} if the load failed. Load balancers, the image's
// HEALTHCHECK and `snowclaw health` ask /readyz, so a starting instance
// gets no searches it would refuse. It sits beside /healthz, outside
// /api/v1, because probes are configured once and outlive API versions,
// and it needs no signature and tells nothing a reader could not learn
// from a search's refusal. Over a shared store an instance too far behind
// the change log (relay.FeedLag) is "behind" and not ready either.

// searchLoad is the load of the index as health and readiness show it.
type searchLoad struct {
	Step    string `json:"step,omitempty"`
	Done    int64  `json:"done,omitempty"`
	Total   int64  `json:"total,omitempty"`
	Percent *int   `json:"percent,omitempty"` // absent while the step's size is unknown
	Error   string `json:"error,omitempty"`
}

// readiness is "ready", "starting" or "failed", and the load while not
// ready.
func (a *API) readiness() (string, *searchLoad) {
	if a.o.Index == nil {
		return "ready", nil
	}
	s := a.o.Index.State()
	if s.Ready {
		return "ready", nil
	}
	l := &searchLoad{Step: s.Step, Done: s.Done, Total: s.Total}
	if pc := s.Percent(); pc >= 0 {
		l.Percent = &pc
	}
	if s.Err != nil {
		l.Error = s.Err.Error()
		return "failed", l
	}
	return "starting", l
}

func (a *API) serveReady(w http.ResponseWriter, req *http.Request) {
	status, load := a.readiness()
	if status == "ready" {
		// over a shared store, an instance too far behind the change log
		// refuses reads and writes: send the traffic elsewhere meanwhile
		if lag, shared, err := a.o.Relay.FeedLag(req.Context()); shared && (err != nil || !lag.Healthy()) {
			status = "behind"
		}
	}
	code := http.StatusOK
	if status != "ready" {
		code = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "1")
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, code, struct {
		Status string      `json:"status"`
		Search *searchLoad `json:"search_loading,omitempty"`
	}{status, load})
}
