package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/snowclaw/snowclaw"

	"github.com/snowclaw/snowclaw/plugins/memory"
)

// The agent directory, trust and conflict dashboard routes of the web UI
// (docs/api.md#directory-trust-and-conflicts).
func (a *API) memoryRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/v1/trust", a.v1(a.v1Trust))
	mux.HandleFunc("GET /api/v1/agents", a.v1(a.v1Agents))
	mux.HandleFunc("GET /api/v1/conflicts", a.v1(a.v1Conflicts))
	mux.HandleFunc("POST /api/v1/conflicts/resolve", a.v1(a.v1Resolve))
}

func (a *API) v1Trust(w http.ResponseWriter, req *http.Request, reader string) {
	v, err := a.o.Memory.Trust(req.Context(), reader)
	if err != nil {
		a.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (a *API) v1Agents(w http.ResponseWriter, req *http.Request, reader string) {
	d, err := a.o.Memory.Agents(req.Context(), reader)
	if err != nil {
		a.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (a *API) v1Conflicts(w http.ResponseWriter, req *http.Request, reader string) {
	cs, err := a.o.Memory.Conflicts(req.Context(), reader, req.URL.Query().Get("topic"))
	if err != nil {
		a.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"conflicts": cs})
}

func (a *API) v1Resolve(w http.ResponseWriter, req *http.Request, actor string) {
	var rr memory.ResolveRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, req.Body, maxAPIBody)).Decode(&rr); err != nil {
		a.writeErr(w, snowclaw.Invalid(`send {"topic", "winner": id} or {"topic", "ids": [...], "flag": true}: %v`, err))
		return
	}
	res, err := a.o.Memory.ResolveConflict(req.Context(), actor, rr)
	if err != nil {
		a.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}
