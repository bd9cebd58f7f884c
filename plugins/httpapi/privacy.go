package httpapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/plugins/rights"
)

// Each person's rights over HTTP (docs/privacy.md), NIP-98 authenticated. A
// person acts on their own data; the owner may name anyone with "npub".
// The export is GET /api/v1/export (v1.go).
func (a *API) privacyRoutes(mux *http.ServeMux) {
	handle := func(pattern string, h personalHandler) { mux.HandleFunc(pattern, cors(a.personal(h))) }
	handle("POST /api/v1/privacy/forget", a.apiForget)
	handle("POST /api/v1/privacy/freeze", a.apiFreeze(true))
	handle("POST /api/v1/privacy/unfreeze", a.apiFreeze(false))
	handle("POST /api/v1/privacy/rectify", a.apiRectify)
	handle("POST /api/v1/privacy/promote", a.apiPromote)
	handle("POST /api/v1/privacy/destroy", a.apiDestroy)
	handle("GET /api/v1/privacy/audit", a.apiAudit)
}

// privacyBody is what the POST routes take.
type privacyBody struct {
	Npub   string   `json:"npub"`
	IDs    []string `json:"ids"`
	Topic  string   `json:"topic"`
	Tags   []string `json:"tags"`
	Before string   `json:"before"`
	Query  string   `json:"query"`
	Token  string   `json:"token"`
	// rectify and promote: the memory (id, or words matching one), its
	// corrected text, the tier and group it moves to
	ID    string        `json:"id"`
	Text  string        `json:"text"`
	Tier  snowclaw.Tier `json:"tier"`
	Group string        `json:"group"`
}

type personalHandler func(w http.ResponseWriter, req *http.Request, who rights.Request, body privacyBody)

// personal authenticates (NIP-98), reads the body and names the subject:
// the caller, or whoever the owner names.
func (a *API) personal(h personalHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		pk, err := a.auth(req)
		if err != nil {
			writeError(w, http.StatusUnauthorized, err.Error())
			return
		}
		var body privacyBody
		if req.Method == http.MethodPost && req.ContentLength != 0 {
			if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
				writeError(w, http.StatusBadRequest, "invalid: the body is not JSON")
				return
			}
		}
		if body.Npub == "" {
			body.Npub = req.URL.Query().Get("npub")
		}
		who := rights.Request{Actor: pk, Via: "http", Subject: pk}
		if body.Npub != "" {
			if who.Subject, err = snowclaw.ParsePubkey(body.Npub); err != nil {
				writeError(w, http.StatusBadRequest, "invalid: "+err.Error())
				return
			}
		}
		h(w, req, who, body)
	}
}

func (a *API) apiExport(w http.ResponseWriter, req *http.Request, who rights.Request, _ privacyBody) {
	x, err := a.o.Rights.Export(req.Context(), who)
	if err != nil {
		a.writeErr(w, err)
		return
	}
	if req.URL.Query().Get("format") == "markdown" {
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		w.Write([]byte(x.Markdown()))
		return
	}
	writeJSON(w, http.StatusOK, x)
}

func (a *API) apiForget(w http.ResponseWriter, req *http.Request, who rights.Request, b privacyBody) {
	sel := rights.Selector{IDs: b.IDs, Topic: b.Topic, Tags: b.Tags, Query: b.Query}
	if b.Before != "" {
		t, err := time.Parse("2006-01-02", b.Before)
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid: before must be YYYY-MM-DD")
			return
		}
		sel.Before = t
	}
	res, err := a.o.Rights.Forget(req.Context(), who, sel, b.Token)
	if err != nil {
		a.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (a *API) apiFreeze(on bool) personalHandler {
	return func(w http.ResponseWriter, req *http.Request, who rights.Request, _ privacyBody) {
		if err := a.o.Rights.Freeze(req.Context(), who, on); err != nil {
			a.writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]bool{"frozen": on})
	}
}

func (a *API) apiRectify(w http.ResponseWriter, req *http.Request, who rights.Request, b privacyBody) {
	c, err := a.o.Rights.Rectify(req.Context(), who, b.ID, b.Text)
	if err != nil {
		a.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

func (a *API) apiPromote(w http.ResponseWriter, req *http.Request, who rights.Request, b privacyBody) {
	c, err := a.o.Rights.Promote(req.Context(), who, b.ID, b.Tier, b.Group)
	if err != nil {
		a.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

func (a *API) apiDestroy(w http.ResponseWriter, req *http.Request, who rights.Request, b privacyBody) {
	res, err := a.o.Rights.Destroy(req.Context(), who, b.Token)
	if err != nil {
		a.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (a *API) apiAudit(w http.ResponseWriter, req *http.Request, who rights.Request, b privacyBody) {
	subject := ""
	if b.Npub != "" {
		subject = who.Subject
	}
	recs, err := a.o.Rights.Audit(who.Actor, subject)
	if err != nil {
		a.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, recs)
}
