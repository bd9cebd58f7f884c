package httpapi

import (
	"net/http"

	"github.com/snowclaw/snowclaw/plugins/remotesearch"
	"github.com/snowclaw/snowclaw/relay"
)

// The owner's status report (docs/api.md "Owner's status"): what the web
// UI's owner view shows of the relay itself — disk, the search index,
// the change log, the agent's place and the remote relays' health. It is
// the operator's business: relay-wide totals tell a reader when others
// store what they cannot see (health's counts are per reader for that
// reason), and the remotes' URLs and failures are configuration. So it is
// the owner's alone, by the same check as the agent's owner routes.

type ownerStatus struct {
	Version     string                      `json:"version"`
	Connections int                         `json:"connections"`
	Disk        relay.DiskStatus            `json:"disk"`
	Index       indexStatus                 `json:"index"`
	Feed        *relay.FeedLag              `json:"feed,omitempty"` // over a shared store only
	Agent       agentPlace                  `json:"agent"`
	Remotes     []remotesearch.RemoteStatus `json:"remotes"`
}

type indexStatus struct {
	Enabled    bool        `json:"enabled"`
	Status     string      `json:"status,omitempty"` // ready, starting, failed
	Rebuilding bool        `json:"rebuilding"`
	Docs       int         `json:"docs"` // every document indexed, whoever may read it
	Loading    *searchLoad `json:"loading,omitempty"`
}

type agentPlace struct {
	Enabled bool `json:"enabled"`
	// Here: the agent runs on this instance (over a shared store it runs
	// on one, the leader; /api/v1/agent/… answers 503 elsewhere).
	Here bool `json:"here"`
}

func (a *API) statusRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/v1/status", cors(a.countAPI(a.ownerSigned(a.v1Status))))
}

func (a *API) v1Status(w http.ResponseWriter, req *http.Request) {
	st := ownerStatus{
		Version: a.o.Version, Connections: a.o.Relay.Connections(), Disk: a.o.Relay.Disk(),
		Agent:   agentPlace{Enabled: a.o.Agent != nil, Here: a.o.Agent != nil && (a.o.Leading == nil || a.o.Leading())},
		Remotes: []remotesearch.RemoteStatus{},
	}
	if a.o.Index != nil {
		st.Index = indexStatus{Enabled: true, Rebuilding: a.o.Index.Rebuilding(), Docs: a.o.Index.Count()}
		st.Index.Status, st.Index.Loading = a.readiness()
	}
	if lag, shared, err := a.o.Relay.FeedLag(req.Context()); shared {
		if err != nil {
			lag.Stopped = true
		}
		st.Feed = &lag
	}
	if a.o.Remotes != nil {
		st.Remotes = a.o.Remotes()
	}
	writeJSON(w, http.StatusOK, st)
}
