package node_test

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/internal/wsclient"
	"github.com/snowclaw/snowclaw/policies"
)

// Attacks on who a connection is and what it reached (findings 4, 12): a
// hostile relay that connects with its own Host to have its users sign
// our challenge, clients forging X-Forwarded-* to multiply their per-IP
// allowance, and malformed AUTH events.

func withTrustedProxies(cidrs ...string) func(*node.Options) {
	return func(o *node.Options) {
		for _, c := range cidrs {
			o.HTTP.TrustedProxies = append(o.HTTP.TrustedProxies, netip.MustParsePrefix(c))
		}
	}
}

// dialWith connects with forged request headers.
func (e *testEnv) dialWith(h http.Header) *wsclient.Client {
	e.t.Helper()
	c, err := wsclient.DialHeader(e.url, h)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

// authAs answers the connection's challenge as u, naming relayURL, and
// returns the OK reason ("" when accepted).
func authAs(t *testing.T, c *wsclient.Client, u user, relayURL string) (bool, string) {
	t.Helper()
	challenge, err := c.Challenge(u.sk, testwait.Scaled(3*time.Second))
	if err != nil {
		t.Fatalf("%v: %s", err, c.All())
	}
	return sendAuth(t, c, mkEvent(u, 22242, nostr.Tags{{"relay", relayURL}, {"challenge", challenge}}, ""))
}

func sendAuth(t *testing.T, c *wsclient.Client, evt nostr.Event) (bool, string) {
	t.Helper()
	err := c.Publish(context.Background(), evt, "AUTH")
	if err == nil {
		return true, ""
	}
	reason, ok := strings.CutPrefix(err.Error(), "msg: ")
	if !ok {
		t.Fatalf("AUTH %s: %v\n%s", evt.ID, err, c.All())
	}
	return false, reason
}

// TestAttack_NIP42ForgedHost: a peer that is not a trusted proxy cannot
// choose the URL AUTH must name, by Host or by X-Forwarded-*; the address
// it really reached still works on the same connection.
func TestAttack_NIP42ForgedHost(t *testing.T) {
	e := startEnv(t)
	alice := newUser()
	c := e.dialWith(http.Header{
		"Host":              {"evil.example"},
		"X-Forwarded-Host":  {"evil.example"},
		"X-Forwarded-Proto": {"https"},
	})
	for _, forged := range []string{"wss://evil.example", "ws://evil.example"} {
		if ok, reason := authAs(t, c, alice, forged); ok || !strings.HasPrefix(reason, "invalid: ") || !strings.Contains(reason, "not this relay") {
			t.Fatalf("AUTH naming the forged %s: accepted=%v %q", forged, ok, reason)
		}
	}
	if ok, reason := authAs(t, c, alice, e.url); !ok {
		t.Fatalf("AUTH naming the address dialled (%s): %q", e.url, reason)
	}
}

// TestAttack_NIP42TrustedProxy: from a trusted proxy the forwarded host
// and scheme are the relay's name; the proxy's own Host header is not.
func TestAttack_NIP42TrustedProxy(t *testing.T) {
	e := startEnv(t, withTrustedProxies("127.0.0.0/8"))
	alice := newUser()
	h := http.Header{"Host": {"evil.example"}, "X-Forwarded-Host": {"relay.example.org"}, "X-Forwarded-Proto": {"https"}}
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"wss://evil.example", false},
		{"ws://relay.example.org", false}, // the proxy said https
		{"wss://relay.example.org", true},
	} {
		if ok, reason := authAs(t, e.dialWith(h), alice, tc.url); ok != tc.ok {
			t.Fatalf("AUTH naming %s behind a trusted proxy: accepted=%v %q, want %v", tc.url, ok, reason, tc.ok)
		}
	}
}

// TestAttack_XForwardedForRateLimit: the per-IP connection limit counts
// the real client. From an untrusted peer X-Forwarded-For is ignored;
// behind a trusted proxy that appends, a forged leftmost entry changes
// nothing, while another real client has its own allowance.
func TestAttack_XForwardedForRateLimit(t *testing.T) {
	limited := func(o *node.Options) { o.ConnRateIP = policies.Rate{PerSecond: 0.001, Burst: 2} }
	refused := func(t *testing.T, e *testEnv, xff string) bool {
		t.Helper()
		c, err := wsclient.DialHeader(e.url, http.Header{"X-Forwarded-For": {xff}})
		var he *wsclient.HandshakeError
		if errors.As(err, &he) && he.Status == http.StatusTooManyRequests {
			return true
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return false
	}
	t.Run("untrusted_peer", func(t *testing.T) {
		e := startEnv(t, limited)
		for i, xff := range []string{"198.51.100.1", "198.51.100.2"} {
			if refused(t, e, xff) {
				t.Fatalf("connection %d refused within the burst", i+1)
			}
		}
		if !refused(t, e, "198.51.100.3") {
			t.Fatal("a third connection with yet another forged X-Forwarded-For was accepted: the header was believed")
		}
	})
	t.Run("trusted_proxy_appends", func(t *testing.T) {
		e := startEnv(t, limited, withTrustedProxies("127.0.0.1/32", "10.0.0.0/8"))
		// the client forges the left part; the proxies append what they saw
		for i, xff := range []string{"1.1.1.1, 203.0.113.7", "2.2.2.2, 203.0.113.7, 10.1.2.3"} {
			if refused(t, e, xff) {
				t.Fatalf("connection %d refused within the burst", i+1)
			}
		}
		if !refused(t, e, "3.3.3.3, 203.0.113.7") {
			t.Fatal("203.0.113.7 got a third connection by forging the leftmost X-Forwarded-For entry")
		}
		if refused(t, e, "203.0.113.8") {
			t.Fatal("another client behind the same proxy was refused: the proxy's address was counted")
		}
	})
}

// TestAttack_AuthMalformed: each malformed AUTH event gets OK false with
// its own reason (no panic, no dropped connection), and a good one then
// succeeds on the same connection.
func TestAttack_AuthMalformed(t *testing.T) {
	e := startEnv(t)
	alice := newUser()
	c := e.connect(nil)
	challenge, err := c.Challenge(alice.sk, testwait.Scaled(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	sign := func(kind int, tags nostr.Tags, at nostr.Timestamp) nostr.Event {
		evt := nostr.Event{Kind: kind, Tags: tags, CreatedAt: at}
		if err := evt.Sign(alice.sk); err != nil {
			t.Fatal(err)
		}
		return evt
	}
	now := nostr.Now()
	good := nostr.Tags{{"relay", e.url}, {"challenge", challenge}}
	badSig := sign(22242, good, now)
	badSig.Sig = strings.Repeat("0", 128)
	badID := sign(22242, good, now)
	badID.ID = strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name string
		evt  nostr.Event
		want string
	}{
		{"no_relay_tag", sign(22242, nostr.Tags{{"challenge", challenge}}, now), "needs a relay tag"},
		{"relay_tag_without_value", sign(22242, nostr.Tags{{"relay"}, {"challenge", challenge}}, now), "relay tag has no value"},
		{"two_relay_tags", sign(22242, nostr.Tags{{"relay", e.url}, {"relay", "wss://evil.example"}, {"challenge", challenge}}, now), "2 relay tags"},
		{"relay_not_a_ws_url", sign(22242, nostr.Tags{{"relay", "mailto:x@example.com"}, {"challenge", challenge}}, now), "not a ws:// or wss://"},
		{"no_challenge", sign(22242, nostr.Tags{{"relay", e.url}}, now), "needs a challenge tag"},
		{"wrong_challenge", sign(22242, nostr.Tags{{"relay", e.url}, {"challenge", "not-" + challenge}}, now), "not this connection's challenge"},
		{"old_created_at", sign(22242, good, now-3600), "created_at"},
		{"wrong_kind", sign(1, good, now), "kind 22242"},
		{"bad_signature", badSig, "signature does not verify"},
		{"id_not_hash", badID, "id is not the hash"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, reason := sendAuth(t, c, tc.evt)
			if ok || !strings.HasPrefix(reason, "invalid: ") || !strings.Contains(reason, tc.want) {
				t.Fatalf("accepted=%v reason %q, want invalid: …%s", ok, reason, tc.want)
			}
		})
	}
	if ok, reason := sendAuth(t, c, sign(22242, good, nostr.Now())); !ok {
		t.Fatalf("a good AUTH after the bad ones: %q\n%s", reason, c.All())
	}
}
