package httpapi

import (
	"embed"
	"io/fs"
	"net/http"
)

// The web UI (docs/api.md#web-ui) is static files embedded in the
// binary: plain ES modules that talk to this relay only, over its
// websocket (NIP-42) and its HTTP API (NIP-98). No build step.
//
//go:embed ui
var uiFiles embed.FS

// uiCSP keeps the page talking to its own relay: scripts, styles and
// fetches from this origin, websockets to any relay URL (the page opens
// its own; behind a proxy the scheme or host may differ), and no framing.
const uiCSP = "default-src 'self'; connect-src 'self' ws: wss:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// uiRoutes serves the UI at /ui/.
func (a *API) uiRoutes(mux *http.ServeMux) {
	sub, err := fs.Sub(uiFiles, "ui")
	if err != nil {
		a.log.Error("web UI not served: embedded files missing", "err", err)
		return
	}
	files := http.StripPrefix("/ui/", http.FileServerFS(sub))
	mux.HandleFunc("GET /ui", func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, "/ui/", http.StatusMovedPermanently)
	})
	mux.Handle("GET /ui/", uiHeaders(files))
}

// uiHeaders adds the security headers to every UI response. The files
// carry no modification time (embed), so caching is revalidated on each
// load: an upgraded binary shows its own UI at once.
func uiHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", uiCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		next.ServeHTTP(w, req)
	})
}
