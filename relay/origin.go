package relay

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// Who is on the other end, and by what name it reached us, are the two
// questions every per-IP limit, NIP-42 AUTH and NIP-98 header depend on.
// Both are answered here, once, from the connection itself; headers that
// claim otherwise (X-Forwarded-For, -Host, -Proto) are believed only when
// the peer is a configured trusted proxy. RFC 7239 Forwarded is not read:
// a proxy that writes only X-Forwarded-* passes a client's Forwarded
// through untouched, so believing it would let the client speak for the
// proxy.

// ParseTrustedProxies reads CIDRs ("10.0.0.0/8") and single addresses
// ("127.0.0.1", "::1") into prefixes, naming the first entry that is
// neither.
func ParseTrustedProxies(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		s = strings.TrimSpace(s)
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an IP address nor a CIDR (e.g. 10.0.0.0/8, 127.0.0.1)", s)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// proxies is the set of peers whose forwarded headers are believed.
type proxies []netip.Prefix

func (r *Relay) trustedProxies() proxies { return proxies(r.opts.HTTP.TrustedProxies) }

func (p proxies) trusts(a netip.Addr) bool {
	a = a.Unmap()
	for _, pre := range p {
		if pre.Contains(a) {
			return true
		}
	}
	return false
}

// peerAddr is the address the TCP connection came from.
func peerAddr(req *http.Request) (netip.Addr, bool) {
	ap, err := netip.ParseAddrPort(req.RemoteAddr)
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr().Unmap(), true
}

// forwarded is what a proxy said about the request it passed on.
type forwarded struct {
	chain []string // X-Forwarded-For, leftmost (claimed client) first
	host  string   // X-Forwarded-Host, the value nearest us
	proto string   // X-Forwarded-Proto, likewise, lower case
}

// parseForwarded reads the X-Forwarded-* headers, every line of each. For
// host and proto the rightmost value wins: it was written by the proxy
// nearest us (the one we trust), a value further left may be the
// client's own.
func parseForwarded(h http.Header) forwarded {
	list := func(name string) []string {
		var out []string
		for _, line := range h.Values(name) {
			for _, v := range strings.Split(line, ",") {
				if v = strings.TrimSpace(v); v != "" {
					out = append(out, v)
				}
			}
		}
		return out
	}
	last := func(vs []string) string {
		if len(vs) == 0 {
			return ""
		}
		return vs[len(vs)-1]
	}
	return forwarded{
		chain: list("X-Forwarded-For"),
		host:  last(list("X-Forwarded-Host")),
		proto: strings.ToLower(last(list("X-Forwarded-Proto"))),
	}
}

// clientAddr walks X-Forwarded-For from the right, past every trusted
// proxy, to the first address we did not configure: each trusted hop
// appended the address it saw, so that one is real, while anything to its
// left is the client's to write. From an untrusted peer the header is
// ignored. An entry that is not an address ends the walk at the last hop
// we believed.
func (p proxies) clientAddr(peer netip.Addr, f forwarded) netip.Addr {
	client := peer
	for i := len(f.chain) - 1; i >= 0 && p.trusts(client); i-- {
		a, err := parseHopAddr(f.chain[i])
		if err != nil {
			break
		}
		client = a
	}
	return client
}

// parseHopAddr accepts "1.2.3.4", "2001:db8::1", and the forms with a port
// some proxies write ("1.2.3.4:5678", "[2001:db8::1]:5678").
func parseHopAddr(s string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), nil
	}
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return netip.Addr{}, err
	}
	return ap.Addr().Unmap(), nil
}

// clientIPKey carries remoteIP from guardHTTP to the handlers.
type clientIPKey struct{}

// clientIP is remoteIP for a plain HTTP request, computed once by
// guardHTTP; without it (a handler reached some other way) the peer.
func clientIP(req *http.Request) string {
	if ip, ok := req.Context().Value(clientIPKey{}).(string); ok {
		return ip
	}
	if peer, ok := peerAddr(req); ok {
		return peer.String()
	}
	return req.RemoteAddr
}

// remoteIP is the address per-IP limits count: the peer, or behind a
// trusted proxy the client it names.
func (r *Relay) remoteIP(req *http.Request) string {
	peer, ok := peerAddr(req)
	if !ok {
		return req.RemoteAddr
	}
	px := r.trustedProxies()
	if !px.trusts(peer) {
		return peer.String()
	}
	return px.clientAddr(peer, parseForwarded(req.Header)).String()
}

// selfOrigin is the relay's own name as one request reached it: the only
// scheme and host a NIP-42 relay tag or NIP-98 u tag may carry.
type selfOrigin struct {
	secure bool   // wss/https
	host   string // host[:port], as clients write it
	// local is the loopback address the connection was accepted on: a
	// local tool may name it (or localhost) besides host. Only a client on
	// this machine can be made to sign a loopback URL, so a hostile relay
	// elsewhere gains nothing from it.
	local string
}

// origin decides selfOrigin for req. The Host header is never believed:
// anyone can send any, and a hostile relay that connected with its own
// name could otherwise have its users sign our challenge. Order:
// service_url when set; otherwise what a trusted proxy forwarded; otherwise
// the address the connection was accepted on.
func (r *Relay) origin(req *http.Request) selfOrigin {
	var o selfOrigin
	local := ""
	if a, ok := req.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		local = a.String()
	}
	if isLoopbackHost(local) {
		o.local = local
	}
	if r.opts.ServiceURL != "" {
		// validated at start (cmd/snowclaw config); a bad one names nothing
		u, err := url.Parse(r.opts.ServiceURL)
		if err != nil {
			u = &url.URL{}
		}
		o.secure, o.host = u.Scheme == "wss" || u.Scheme == "https", u.Host
		return o
	}
	o.secure, o.host = req.TLS != nil, local
	if peer, ok := peerAddr(req); ok && r.trustedProxies().trusts(peer) {
		f := parseForwarded(req.Header)
		if f.proto != "" {
			o.secure = f.proto == "https" || f.proto == "wss"
		}
		if f.host != "" {
			o.host = f.host
		}
	}
	return o
}

// errNotUs is why a signed URL does not name this relay.
var errNotUs = errors.New("the URL does not name this relay")

// names checks that a signed URL's scheme and host are this relay's as
// the request reached it; the path is the caller's business (NIP-42 has
// none, NIP-98 names the endpoint). ws and http are one scheme here, as
// are wss and https.
func (o selfOrigin) names(u *url.URL) error {
	var secure bool
	switch strings.ToLower(u.Scheme) {
	case "ws", "http":
	case "wss", "https":
		secure = true
	default:
		return errNotUs
	}
	if u.Host == "" || u.User != nil {
		return errNotUs
	}
	if secure == o.secure && sameHost(u.Host, o.host, secure) {
		return nil
	}
	if o.local != "" && !secure && sameHost(u.Host, o.local, false) {
		return nil
	}
	return errNotUs
}

// String is the URL clients should sign, for error messages.
func (o selfOrigin) String() string {
	if o.secure {
		return "wss://" + o.host
	}
	return "ws://" + o.host
}

// sameHost compares host[:port] case-insensitively, with a default port
// for the scheme and localhost equal to any loopback address.
func sameHost(a, b string, secure bool) bool {
	ha, pa := splitHostPortDefault(a, secure)
	hb, pb := splitHostPortDefault(b, secure)
	if pa != pb {
		return false
	}
	if strings.EqualFold(ha, hb) {
		return true
	}
	return isLoopbackName(ha) && isLoopbackName(hb)
}

func splitHostPortDefault(hp string, secure bool) (host, port string) {
	host, port, err := net.SplitHostPort(hp)
	if err != nil {
		host, port = strings.Trim(hp, "[]"), ""
	}
	if port == "" {
		port = "80"
		if secure {
			port = "443"
		}
	}
	return strings.TrimSuffix(host, "."), port
}

func isLoopbackName(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(strings.Trim(h, "[]"))
	return err == nil && a.Unmap().IsLoopback()
}
