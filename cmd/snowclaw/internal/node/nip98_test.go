package node_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
)

// nonceTag makes each authorization event unique: the relay accepts an
// event id once, and go-nostr signs deterministically, so two identical
// requests within a second would otherwise carry one id.
func nonceTag() nostr.Tag { return nostr.Tag{"nonce", nostr.GeneratePrivateKey()[:16]} }

// nip98Header signs a kind 27235 authorization for url and method.
func nip98Header(u user, url, method string, extra ...nostr.Tag) string {
	evt := nostr.Event{Kind: 27235, CreatedAt: nostr.Now(), Tags: append(nostr.Tags{{"u", url}, {"method", method}, nonceTag()}, extra...)}
	evt.Sign(u.sk)
	raw, _ := json.Marshal(evt)
	return "Nostr " + base64.StdEncoding.EncodeToString(raw)
}

// TestNIP98_HostAndBody: a header signed for another site is refused
// even when the request claims that site's Host, once the relay knows its
// public URL; a body of unknown length without a payload tag is refused.
func TestNIP98_HostAndBody(t *testing.T) {
	e := startEnv(t, withSearch, func(o *node.Options) { o.ServiceURL = "wss://relay.example.com" })
	base := "http" + strings.TrimPrefix(e.url, "ws")
	do := func(req *http.Request) (int, string) {
		t.Helper()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	const path = "/api/v1/memories"
	for _, tc := range []struct {
		name, signed, host string
		ok                 bool
	}{
		{"public_url", "https://relay.example.com" + path, "", true},
		{"loopback_as_reached", base + path, "", true},
		{"foreign_site_spoofed_host", "https://evil.example" + path, "evil.example", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", base+path, nil)
			if tc.host != "" {
				req.Host = tc.host
			}
			req.Header.Set("Authorization", nip98Header(e.owner, tc.signed, "GET"))
			code, body := do(req)
			if (code == 200) != tc.ok {
				t.Fatalf("signed for %s, Host %q: %d %s", tc.signed, tc.host, code, body)
			}
		})
	}
	t.Run("chunked_body_without_payload", func(t *testing.T) {
		body := `{"text":"smuggled in a chunked body","tier":"private"}`
		req, _ := http.NewRequest("POST", base+path, iotest.OneByteReader(strings.NewReader(body)))
		req.ContentLength = -1 // sent chunked
		req.Header.Set("Authorization", nip98Header(e.owner, base+path, "POST"))
		code, res := do(req)
		if code < 400 || !strings.Contains(res, "payload") {
			t.Fatalf("chunked body without a payload tag: %d %s", code, res)
		}
	})
}
