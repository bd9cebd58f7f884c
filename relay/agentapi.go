package relay

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/snowclaw/snowclaw/agent"
	"github.com/snowclaw/snowclaw/agent/dynconfig"
)

// The owner's API over the agent's memory (the memory and config CLI
// commands use it). Every route needs NIP-98 auth by the owner: the
// records hold what the agent knows about everybody.
func (r *Relay) agentRoutes() {
	mux := r.mux
	handle := func(pattern string, h func(http.ResponseWriter, *http.Request)) {
		mux.HandleFunc(pattern, r.ownerOnly(h))
	}
	handle("GET /api/agent/memory", r.apiList)
	handle("GET /api/agent/memory/{subject}", r.apiGet)
	handle("POST /api/agent/memory/{subject}", r.apiSet)
	handle("DELETE /api/agent/memory/{subject}", r.apiDeleteRecord)
	handle("GET /api/agent/items", r.apiItems)
	handle("DELETE /api/agent/items/{id}", r.apiDeleteItem)
	handle("POST /api/agent/flush", r.apiFlush)
	handle("POST /api/agent/compact", r.apiCompact)
	handle("GET /api/agent/lessons", r.apiLessons)
	handle("POST /api/agent/lessons/{id}", r.apiLessonSet)
	handle("DELETE /api/agent/lessons/{id}", r.apiLessonDelete)
	handle("GET /api/agent/config/{scope}", r.apiConfig)
	handle("GET /api/agent/stats", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, r.agent.Stats()) })
}

// ownerOnly wraps a handler with NIP-98 auth and the owner check.
func (r *Relay) ownerOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		pk, err := r.httpAuth(req)
		if err != nil {
			writeError(w, http.StatusUnauthorized, err.Error())
			return
		}
		if r.ids.Owner == "" || pk != r.ids.Owner {
			writeError(w, http.StatusForbidden, "restricted: only the relay's owner may use the agent API")
			return
		}
		if r.agent == nil {
			writeError(w, http.StatusServiceUnavailable, "unsupported: the agent is off on this relay")
			return
		}
		h(w, req)
	}
}

func (r *Relay) apiList(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, r.agent.List())
}

func (r *Relay) apiGet(w http.ResponseWriter, req *http.Request) {
	s, err := agent.ParseSubject(req.PathValue("subject"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid: "+err.Error())
		return
	}
	snap, ok := r.agent.Get(s)
	if !ok {
		writeError(w, http.StatusNotFound, "not found: the agent holds nothing about "+req.PathValue("subject"))
		return
	}
	writeJSON(w, http.StatusOK, snap)
}

// apiSet takes {"note": "..."} and/or {"prefs": {"key": "value"}} for a
// person.
func (r *Relay) apiSet(w http.ResponseWriter, req *http.Request) {
	s, err := agent.ParseSubject(req.PathValue("subject"))
	if err != nil || s.Pubkey == "" {
		writeError(w, http.StatusBadRequest, "invalid: notes and preferences are set on a person (npub)")
		return
	}
	var body struct {
		Note  string            `json:"note"`
		Prefs map[string]string `json:"prefs"`
	}
	if err := json.NewDecoder(req.Body).Decode(&body); err != nil || (body.Note == "" && len(body.Prefs) == 0) {
		writeError(w, http.StatusBadRequest, `invalid: send {"note": "..."} or {"prefs": {"key": "value"}}`)
		return
	}
	if strings.TrimSpace(body.Note) != "" {
		r.agent.AddOwnerNote(s.Pubkey, body.Note)
	}
	for k, v := range body.Prefs {
		r.agent.SetPref(s.Pubkey, k, v)
	}
	if err := r.agent.Flush(req.Context()); err != nil {
		writeError(w, http.StatusInternalServerError, "error: saved in memory but not yet on the relay: "+err.Error())
		return
	}
	snap, _ := r.agent.Get(s)
	writeJSON(w, http.StatusOK, snap)
}

func (r *Relay) apiDeleteRecord(w http.ResponseWriter, req *http.Request) {
	s, err := agent.ParseSubject(req.PathValue("subject"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid: "+err.Error())
		return
	}
	if err := r.agent.DeleteRecord(req.Context(), s); err != nil {
		writeError(w, http.StatusNotFound, "not found: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"deleted": req.PathValue("subject")})
}

func (r *Relay) apiItems(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, r.agent.Items())
}

func (r *Relay) apiDeleteItem(w http.ResponseWriter, req *http.Request) {
	if err := r.agent.DeleteItem(req.Context(), req.PathValue("id")); err != nil {
		writeError(w, http.StatusNotFound, "not found: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"deleted": req.PathValue("id")})
}

func (r *Relay) apiFlush(w http.ResponseWriter, req *http.Request) {
	if err := r.agent.Flush(req.Context()); err != nil {
		writeError(w, http.StatusInternalServerError, "error: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, r.agent.List())
}

func (r *Relay) apiCompact(w http.ResponseWriter, req *http.Request) {
	var body struct {
		Max int `json:"max"`
	}
	if req.ContentLength != 0 {
		if err := json.NewDecoder(req.Body).Decode(&body); err != nil || body.Max < 0 {
			writeError(w, http.StatusBadRequest, `invalid: send {"max": N}`)
			return
		}
	}
	n, err := r.agent.Compact(req.Context(), body.Max)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "error: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]int{"removed": n, "items": len(r.agent.Items())})
}

func (r *Relay) apiLessons(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, r.agent.Lessons())
}

// apiLessonSet takes {"enabled": true|false}.
func (r *Relay) apiLessonSet(w http.ResponseWriter, req *http.Request) {
	var body struct {
		Enabled *bool `json:"enabled"`
	}
	if err := json.NewDecoder(req.Body).Decode(&body); err != nil || body.Enabled == nil {
		writeError(w, http.StatusBadRequest, `invalid: send {"enabled": true} or {"enabled": false}`)
		return
	}
	if err := r.agent.SetLessonEnabled(req.PathValue("id"), *body.Enabled); err != nil {
		writeError(w, http.StatusNotFound, "not found: "+err.Error())
		return
	}
	if err := r.agent.Flush(req.Context()); err != nil {
		writeError(w, http.StatusInternalServerError, "error: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, r.agent.Lessons())
}

func (r *Relay) apiLessonDelete(w http.ResponseWriter, req *http.Request) {
	if err := r.agent.DeleteLesson(req.Context(), req.PathValue("id")); err != nil {
		writeError(w, http.StatusNotFound, "not found: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"deleted": req.PathValue("id")})
}

func (r *Relay) apiConfig(w http.ResponseWriter, req *http.Request) {
	s, err := dynconfig.ParseScope(req.PathValue("scope"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, r.agent.Config(s))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
