package relay

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/internal/httpjson"
)

// What the relay offers the components built around it (the memory
// service and the HTTP API, plugins/memory and plugins/httpapi): its
// rules for who is asking and by what name, its read rule, and its
// counters. The rules stay written once, here and in origin.go; the
// components call them.

// maxAPIBody is the default cap of every request body (httpserver.go).
const maxAPIBody = httpjson.MaxBody

func writeError(w http.ResponseWriter, status int, msg string) {
	httpjson.WriteError(w, status, msg)
}

// NamesRelay reports whether a signed URL's scheme and host name this
// relay as req reached it (origin.go): NIP-98's u tag is held to the
// rule NIP-42's relay tag is.
func (r *Relay) NamesRelay(req *http.Request, signed *url.URL) bool {
	return r.origin(req).names(signed) == nil
}

// ClientIP is the address per-IP limits count for a plain HTTP request:
// the peer, or behind a trusted proxy the client it names.
func (r *Relay) ClientIP(req *http.Request) string { return clientIP(req) }

// PublicHost is the host of the configured public URL, "" without one.
func (r *Relay) PublicHost() string {
	u, err := url.Parse(r.opts.ServiceURL)
	if err != nil {
		return ""
	}
	return u.Host
}

// BehindProxy reports whether the relay's public URL names a host other
// than loopback.
func (r *Relay) BehindProxy() bool {
	h := r.PublicHost()
	return h != "" && !isLoopbackHost(h)
}

// ServesHost decides which Host headers a signed HTTP request may carry.
// NIP-98 accepts a u tag naming the request's own Host, which the sender
// chooses, so a header someone signed for another site could be replayed
// here under that site's Host. With a public URL configured, only that
// host (or loopback, for local use) is served.
func (r *Relay) ServesHost(host string) bool {
	public := r.PublicHost()
	return public == "" || strings.EqualFold(host, public) || isLoopbackHost(host)
}

func isLoopbackHost(hostport string) bool {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}

// wantsUI reports whether a request for / comes from a browser, which is
// sent to the UI (plugins/httpapi serves it); other clients keep the
// plain text answer.
func wantsUI(req *http.Request) bool {
	return strings.Contains(req.Header.Get("Accept"), "text/html")
}

// CanRead is the read rule as a yes/no, expiry included, for an event
// read from the store or elsewhere outside the hooks (the search index,
// the memory service, the remote layer): it reads evt here.
func (r *Relay) CanRead(reader string, evt *nostr.Event) bool {
	return r.canRead(reader, snowclaw.ReadEvent(evt))
}

// CheckDisk refuses with ErrDiskFull while the data volume is below its
// reserve.
func (r *Relay) CheckDisk() error { return r.disk.check() }

// DiskFull reports whether new events are being refused for disk space.
func (r *Relay) DiskFull() bool { return r.disk.isFull() }

// Disk measures the data volume's free space for the owner's status.
func (r *Relay) Disk() DiskStatus { return r.disk.status() }

// StoreReadOnly reports whether the event store was opened read-only,
// on a disk below its reserve at start: every write is refused until
// the store is opened again (snowclaw serve does so once there is space).
func (r *Relay) StoreReadOnly() bool { return r.disk.readOnly }

// Connections is the number of open websocket connections.
func (r *Relay) Connections() int { return len(r.subs.all()) }

// CountAPICall counts one HTTP API call (snowclaw_queries_total{type="api"}).
func (r *Relay) CountAPICall() { r.met.query(queryAPI) }

// Metrics is where the components built around the relay register
// their own series (the index's and the agent's, plugins/httpapi): they
// are served with the relay's.
func (r *Relay) Metrics() prometheus.Registerer { return r.met.reg }

// Gatherer is every registered series, for GET /metrics.
func (r *Relay) Gatherer() prometheus.Gatherer { return r.met.reg }

// CountRefusal counts an event refused before it reached the write
// pipeline (which counts its own refusals): the HTTP API's checks of a
// memory it is asked to store.
func (r *Relay) CountRefusal(err error) { r.met.refused(err) }
