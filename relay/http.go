package relay

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/fasthttp/websocket"

	"github.com/nbd-wtf/go-nostr/nip11"
)

// infoDocument is NIP-11 with the "self" field (the relay's own key, which
// signs group metadata) that go-nostr's struct lacks.
type infoDocument struct {
	nip11.RelayInformationDocument
	Self string `json:"self"`
}

// Handler is the relay's HTTP handler: websocket upgrades and everything
// else the routes of r.mux, our NIP-11 document, and a plain page for browsers.
func (r *Relay) Handler() http.Handler {
	return r.guardHTTP(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch {
		case websocket.IsWebSocketUpgrade(req):
			r.serveWS(w, req)
		case req.Header.Get("Accept") == "application/nostr+json":
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
		fmt.Fprintln(w, `{"status":"ok"}`)
	})
}

func (r *Relay) serveNIP11(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/nostr+json")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	json.NewEncoder(w).Encode(infoDocument{RelayInformationDocument: *r.info, Self: r.ids.Relay})
}

func (r *Relay) serveHome(w http.ResponseWriter, req *http.Request) {
	if wantsUI(req) {
		http.Redirect(w, req, "/ui/", http.StatusFound)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "%s: a Nostr relay with NIP-29 groups and an agent memory.\nConnect a Nostr client to this address over websocket.\nRelay information: send Accept: application/nostr+json.\n", r.info.Name)
}

// Mux is where the components built around the relay register their
// HTTP routes (plugins/httpapi), before serving.
func (r *Relay) Mux() *http.ServeMux { return r.mux }
