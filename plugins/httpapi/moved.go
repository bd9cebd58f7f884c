package httpapi

import (
	"net/http"
	"strings"
)

// movedRoutes answer the paths of older releases with 308 Permanent
// Redirect to their place under /api/v1 (the package comment says why
// 308 and what it means for NIP-98). The query string goes along.
func (a *API) movedRoutes(mux *http.ServeMux) {
	mux.HandleFunc("/api/agent/", moved("/api/agent/", "/api/v1/agent/"))
	mux.HandleFunc("/api/privacy/export", moved("/api/privacy/export", "/api/v1/export"))
	mux.HandleFunc("/api/privacy/", moved("/api/privacy/", "/api/v1/privacy/"))
}

func moved(from, to string) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		target := to + strings.TrimPrefix(req.URL.Path, from)
		if req.URL.RawQuery != "" {
			target += "?" + req.URL.RawQuery
		}
		http.Redirect(w, req, target, http.StatusPermanentRedirect)
	}
}
