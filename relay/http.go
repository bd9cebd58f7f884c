package relay

import (
	"encoding/json"
	"fmt"
	"net/http"

	"mime"
	"strings"

	"github.com/fasthttp/websocket"
)

// Handler is the relay's HTTP handler: websocket upgrades and everything
// else the routes of r.mux, our NIP-11 document, and a plain page for browsers.
func (r *Relay) Handler() http.Handler {
	return r.guardHTTP(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch {
		case websocket.IsWebSocketUpgrade(req):
			r.serveWS(w, req)
		case req.Method == http.MethodOptions && (req.URL.Path == "/" || wantsNIP11(req)):
			// a browser's preflight before fetching NIP-11: it does not
			// send the Accept header it is asking permission for
			setNIP11CORS(w)
			w.WriteHeader(http.StatusNoContent)
		case wantsNIP11(req):
			r.serveNIP11(w, req)
		default:
			r.mux.ServeHTTP(w, req)
		}
	}))
}

// routes registers the plain HTTP endpoints, once.
func (r *Relay) routes() {
	mux := r.mux
	mux.HandleFunc("GET /{$}", r.serveHome)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if f := r.follow; f != nil && f.dead.Load() {
			// only a restart brings it back (it must reload its state)
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, `{"status":"lost its place in the shared store's change log; restart this instance"}`)
			return
		}
		fmt.Fprintln(w, `{"status":"ok"}`)
	})
}

// wantsNIP11 reports whether the request accepts application/nostr+json
// among its media ranges ("application/nostr+json", or listed with
// others and quality values).
func wantsNIP11(req *http.Request) bool {
	for _, v := range req.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == "application/nostr+json" {
				return true
			}
		}
	}
	return false
}

// setNIP11CORS sets the headers NIP-11 asks for, so that web clients on
// any origin can read the document.
func setNIP11CORS(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Headers", "Accept, Content-Type, Authorization")
	h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
	h.Set("Access-Control-Max-Age", "86400")
}

func (r *Relay) serveNIP11(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD, OPTIONS")
		http.Error(w, "invalid: NIP-11 is served to GET", http.StatusMethodNotAllowed)
		return
	}
	b, err := json.Marshal(r.information())
	if err != nil {
		http.Error(w, "error: could not build the relay information", http.StatusInternalServerError)
		return
	}
	setNIP11CORS(w)
	w.Header().Set("Content-Type", "application/nostr+json")
	w.Write(b)
}

func (r *Relay) serveHome(w http.ResponseWriter, req *http.Request) {
	if wantsUI(req) {
		http.Redirect(w, req, "/ui/", http.StatusFound)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "%s: a Nostr relay with NIP-29 groups and an agent memory.\nConnect a Nostr client to this address over websocket.\nRelay information: send Accept: application/nostr+json.\n", r.information().Name)
}

// Mux is where the components built around the relay register their
// HTTP routes (plugins/httpapi), before serving.
func (r *Relay) Mux() *http.ServeMux { return r.mux }
