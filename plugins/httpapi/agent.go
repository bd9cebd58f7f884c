package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent"
	"github.com/snowclaw/snowclaw/agent/dynconfig"
	"github.com/snowclaw/snowclaw/agent/learn"
)

// onLeader answers 503 on an instance whose agent stands by: over a
// shared store the agent runs on one instance (the leader), and this
// one's holds nothing to show or change. The client retries; behind a
// load balancer the next request may reach the leader (docs/scaling.md:
// route /api/v1/agent/ to it, or retry).
func (a *API) onLeader(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if a.o.Leading != nil && !a.o.Leading() {
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusServiceUnavailable, "error: the agent runs on another instance of this relay (the leader); retry")
			return
		}
		h(w, r)
	}
}

// The owner's API over the agent's memory (the memory and config CLI
// commands use it). Every route needs NIP-98 auth by the owner: the
// records hold what the agent knows about everybody.
func (a *API) agentRoutes(mux *http.ServeMux) {
	handle := func(pattern string, h func(http.ResponseWriter, *http.Request)) {
		mux.HandleFunc(pattern, cors(a.ownerOnly(a.onLeader(h))))
	}
	handle("GET /api/v1/agent/memory", a.apiList)
	handle("GET /api/v1/agent/memory/{subject}", a.apiGet)
	handle("POST /api/v1/agent/memory/{subject}", a.apiSet)
	handle("DELETE /api/v1/agent/memory/{subject}", a.apiDeleteRecord)
	handle("GET /api/v1/agent/items", a.apiItems)
	handle("DELETE /api/v1/agent/items/{id}", a.apiDeleteItem)
	handle("POST /api/v1/agent/flush", a.apiFlush)
	handle("POST /api/v1/agent/compact", a.apiCompact)
	handle("POST /api/v1/agent/restore/{event}", a.apiRestore)
	handle("GET /api/v1/agent/lessons", a.apiLessons)
	handle("POST /api/v1/agent/lessons/{id}", a.apiLessonSet)
	handle("DELETE /api/v1/agent/lessons/{id}", a.apiLessonDelete)
	handle("GET /api/v1/agent/config/{scope}", a.apiConfig)
	handle("GET /api/v1/agent/context/{subject}", a.apiContext)
	handle("GET /api/v1/agent/learning", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, a.o.Agent.LearningStatus())
	})
	handle("GET /api/v1/agent/stats", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, a.o.Agent.Stats()) })
}

// ownerOnly wraps a handler of the agent API with NIP-98 auth, the owner
// check and the agent being on.
func (a *API) ownerOnly(h http.HandlerFunc) http.HandlerFunc {
	return a.ownerSigned(func(w http.ResponseWriter, req *http.Request) {
		if a.o.Agent == nil {
			a.writeErr(w, snowclaw.Unsupported("the agent is off on this relay"))
			return
		}
		h(w, req)
	})
}

// ownerSigned is the one owner check of the owner's routes: a valid
// NIP-98 signature (401 otherwise) by the configured owner (403
// otherwise, and for everyone on a relay without an owner).
func (a *API) ownerSigned(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		pk, err := a.auth(req)
		if err != nil {
			w.Header().Set("WWW-Authenticate", "Nostr")
			writeError(w, http.StatusUnauthorized, err.Error())
			return
		}
		if a.ids.Owner == "" || pk != a.ids.Owner {
			writeError(w, http.StatusForbidden, "restricted: only the relay's owner may use this route")
			return
		}
		h(w, req)
	}
}

func (a *API) apiList(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, a.o.Agent.List())
}

func (a *API) apiGet(w http.ResponseWriter, req *http.Request) {
	s, err := agent.ParseSubject(req.PathValue("subject"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid: "+err.Error())
		return
	}
	snap, ok := a.o.Agent.Get(s)
	if !ok {
		a.writeErr(w, snowclaw.NotFound("the agent holds nothing about %s", req.PathValue("subject")))
		return
	}
	writeJSON(w, http.StatusOK, snap)
}

// apiSet takes {"note": "..."} and/or {"prefs": {"key": "value"}} for a
// person.
func (a *API) apiSet(w http.ResponseWriter, req *http.Request) {
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
		a.o.Agent.AddOwnerNote(s.Pubkey, body.Note)
	}
	for k, v := range body.Prefs {
		a.o.Agent.SetPref(s.Pubkey, k, v)
	}
	if err := a.o.Agent.Flush(req.Context()); err != nil {
		a.writeErr(w, snowclaw.Internal("saved in memory but not yet on the relay: %v", err))
		return
	}
	snap, _ := a.o.Agent.Get(s)
	writeJSON(w, http.StatusOK, snap)
}

func (a *API) apiDeleteRecord(w http.ResponseWriter, req *http.Request) {
	s, err := agent.ParseSubject(req.PathValue("subject"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid: "+err.Error())
		return
	}
	if err := a.o.Agent.DeleteRecord(req.Context(), s); err != nil {
		a.writeErr(w, snowclaw.NotFound("%v", err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"deleted": req.PathValue("subject")})
}

func (a *API) apiItems(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, a.o.Agent.Items())
}

func (a *API) apiDeleteItem(w http.ResponseWriter, req *http.Request) {
	if err := a.o.Agent.DeleteItem(req.Context(), req.PathValue("id")); err != nil {
		a.writeErr(w, snowclaw.NotFound("%v", err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"deleted": req.PathValue("id")})
}

func (a *API) apiFlush(w http.ResponseWriter, req *http.Request) {
	if err := a.o.Agent.Flush(req.Context()); err != nil {
		a.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, a.o.Agent.List())
}

// apiRestore brings back an archived, merged or superseded memory of the
// agent by the id of its event.
func (a *API) apiRestore(w http.ResponseWriter, req *http.Request) {
	id := req.PathValue("event")
	if !nostr.IsValid32ByteHex(id) {
		writeError(w, http.StatusBadRequest, "invalid: give the 64-hex id of the memory's event")
		return
	}
	it, err := a.o.Agent.Restore(req.Context(), id)
	switch {
	case errors.Is(err, agent.ErrNotArchived):
		a.writeErr(w, snowclaw.NotFound("%v", err))
		return
	case err != nil:
		a.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, it)
}

func (a *API) apiCompact(w http.ResponseWriter, req *http.Request) {
	var body struct {
		Max int `json:"max"`
	}
	if req.ContentLength != 0 {
		if err := json.NewDecoder(req.Body).Decode(&body); err != nil || body.Max < 0 {
			writeError(w, http.StatusBadRequest, `invalid: send {"max": N}`)
			return
		}
	}
	rep, err := a.o.Agent.Compact(req.Context(), body.Max)
	if err != nil {
		a.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		learn.CompactReport
		Items int `json:"items"`
	}{rep, len(a.o.Agent.Items())})
}

func (a *API) apiLessons(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, a.o.Agent.Lessons())
}

// apiLessonSet takes {"enabled": true|false}.
func (a *API) apiLessonSet(w http.ResponseWriter, req *http.Request) {
	var body struct {
		Enabled *bool `json:"enabled"`
	}
	if err := json.NewDecoder(req.Body).Decode(&body); err != nil || body.Enabled == nil {
		writeError(w, http.StatusBadRequest, `invalid: send {"enabled": true} or {"enabled": false}`)
		return
	}
	if err := a.o.Agent.SetLessonEnabled(req.PathValue("id"), *body.Enabled); err != nil {
		a.writeErr(w, snowclaw.NotFound("%v", err))
		return
	}
	if err := a.o.Agent.Flush(req.Context()); err != nil {
		a.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, a.o.Agent.Lessons())
}

func (a *API) apiLessonDelete(w http.ResponseWriter, req *http.Request) {
	if err := a.o.Agent.DeleteLesson(req.Context(), req.PathValue("id")); err != nil {
		a.writeErr(w, snowclaw.NotFound("%v", err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"deleted": req.PathValue("id")})
}

func (a *API) apiConfig(w http.ResponseWriter, req *http.Request) {
	s, err := dynconfig.ParseScope(req.PathValue("scope"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, a.o.Agent.Config(s))
}

// apiContext is the debug view of the last prompt of a conversation: the
// memory ids recalled into it (docs/agent.md#using-it).
func (a *API) apiContext(w http.ResponseWriter, req *http.Request) {
	s, err := agent.ParseSubject(req.PathValue("subject"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid: "+err.Error())
		return
	}
	v, ok := a.o.Agent.LastContext(s)
	if !ok {
		writeError(w, http.StatusNotFound, "invalid: no prompt has been built for this conversation since the relay started")
		return
	}
	writeJSON(w, http.StatusOK, v)
}
