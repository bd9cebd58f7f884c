package relay

import (
	"net/http"
	"net/netip"
	"net/url"
	"testing"
)

func TestParseTrustedProxies(t *testing.T) {
	got, err := ParseTrustedProxies([]string{"10.0.0.0/8", " 127.0.0.1 ", "::1", "192.168.1.7/16", "::ffff:10.1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.0.0/8", "127.0.0.1/32", "::1/128", "192.168.0.0/16", "10.1.2.3/32"}
	for i, p := range got {
		if p.String() != want[i] {
			t.Fatalf("entry %d: %s, want %s", i, p, want[i])
		}
	}
	for _, bad := range []string{"", "localhost", "10.0.0.0/33", "1.2.3"} {
		if _, err := ParseTrustedProxies([]string{bad}); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}

// TestClientAddr: the rightmost X-Forwarded-For entry that is not a
// trusted proxy, and only when the peer itself is one.
func TestClientAddr(t *testing.T) {
	px, _ := ParseTrustedProxies([]string{"10.0.0.0/8", "127.0.0.1"})
	for _, tc := range []struct {
		name, peer string
		xff        []string
		want       string
	}{
		{"untrusted_peer_ignores_header", "198.51.100.9", []string{"1.1.1.1"}, "198.51.100.9"},
		{"no_header", "127.0.0.1", nil, "127.0.0.1"},
		{"one_hop", "127.0.0.1", []string{"203.0.113.7"}, "203.0.113.7"},
		{"forged_left_part", "127.0.0.1", []string{"1.1.1.1, 203.0.113.7"}, "203.0.113.7"},
		{"two_trusted_hops", "127.0.0.1", []string{"1.1.1.1, 203.0.113.7, 10.2.3.4"}, "203.0.113.7"},
		{"several_header_lines", "127.0.0.1", []string{"1.1.1.1", "203.0.113.7, 10.2.3.4"}, "203.0.113.7"},
		{"with_ports", "127.0.0.1", []string{"[2001:db8::1]:443, 203.0.113.7:5678"}, "203.0.113.7"},
		{"ipv6", "127.0.0.1", []string{"2001:db8::1"}, "2001:db8::1"},
		{"mapped_ipv4", "127.0.0.1", []string{"::ffff:203.0.113.7"}, "203.0.113.7"},
		{"garbage_stops_at_last_trusted", "127.0.0.1", []string{"203.0.113.7, unknown"}, "127.0.0.1"},
		{"all_trusted", "127.0.0.1", []string{"10.0.0.1, 10.0.0.2"}, "10.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tc.xff {
				h.Add("X-Forwarded-For", v)
			}
			got := proxies(px).clientAddr(netip.MustParseAddr(tc.peer), parseForwarded(h))
			if !proxies(px).trusts(netip.MustParseAddr(tc.peer)) {
				got = netip.MustParseAddr(tc.peer) // what clientIP does first
			}
			if got.String() != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestParseForwarded_NearestHostAndProto(t *testing.T) {
	h := http.Header{}
	h.Add("X-Forwarded-Host", "evil.example, relay.example.org")
	h.Add("X-Forwarded-Proto", "http")
	h.Add("X-Forwarded-Proto", "HTTPS")
	f := parseForwarded(h)
	if f.host != "relay.example.org" || f.proto != "https" {
		t.Fatalf("%+v", f)
	}
}

func TestSelfOriginNames(t *testing.T) {
	public := selfOrigin{secure: true, host: "relay.example.org"}
	local := selfOrigin{host: "127.0.0.1:3334", local: "127.0.0.1:3334"}
	withAlias := selfOrigin{secure: true, host: "relay.example.org", local: "127.0.0.1:3334"}
	for _, tc := range []struct {
		o    selfOrigin
		url  string
		want bool
	}{
		{public, "wss://relay.example.org", true},
		{public, "wss://RELAY.example.org:443/", true},
		{public, "https://relay.example.org/api", true},
		{public, "ws://relay.example.org", false},
		{public, "wss://relay.example.org:8443", false},
		{public, "wss://evil.example", false},
		{public, "wss://user@relay.example.org", false},
		{public, "ftp://relay.example.org", false},
		{local, "ws://127.0.0.1:3334", true},
		{local, "ws://localhost:3334", true},
		{local, "ws://[::1]:3334", true},
		{local, "ws://127.0.0.1:3335", false},
		{local, "wss://127.0.0.1:3334", false},
		{withAlias, "ws://localhost:3334", true},
		{withAlias, "ws://evil.example:3334", false},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := tc.o.names(u) == nil; got != tc.want {
			t.Errorf("%+v names %s: %v, want %v", tc.o, tc.url, got, tc.want)
		}
	}
}

// FuzzClientAddr: whatever a client writes in X-Forwarded-For, the
// address counted is the peer or an entry to the right of every untrusted
// one — never something left of the first address a trusted hop did not
// vouch for — and nothing panics.
func FuzzClientAddr(f *testing.F) {
	f.Add("1.1.1.1, 203.0.113.7", "10.0.0.1")
	f.Add("[::1]:80,unknown,,10.1.1.1", "127.0.0.1")
	f.Add("", "198.51.100.1")
	px, _ := ParseTrustedProxies([]string{"10.0.0.0/8", "127.0.0.1"})
	f.Fuzz(func(t *testing.T, xff, peer string) {
		p, err := netip.ParseAddr(peer)
		if err != nil {
			return
		}
		p = p.Unmap()
		h := http.Header{"X-Forwarded-For": {xff}}
		f := parseForwarded(h)
		got := proxies(px).clientAddr(p, f)
		if !proxies(px).trusts(p) {
			return // clientIP never walks from an untrusted peer
		}
		if got == p {
			return
		}
		// got is a chain entry, and every entry right of it is trusted
		for i := len(f.chain) - 1; i >= 0; i-- {
			a, err := parseHopAddr(f.chain[i])
			if err != nil {
				t.Fatalf("walked past an unparsable entry to %s", got)
			}
			if a == got {
				return
			}
			if !proxies(px).trusts(a) {
				t.Fatalf("walked past untrusted %s to %s", a, got)
			}
		}
		t.Fatalf("%s is neither the peer nor in the chain %q", got, xff)
	})
}
