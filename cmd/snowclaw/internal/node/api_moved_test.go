package node_test

import (
	"net/http"
	"testing"
)

// TestAPI_OldPathsMoved: the paths of older releases answer 308 to their
// place under /api/v1, query included; a client following the redirect
// is served there with a header signed for the new URL, and refused with
// one signed for the old URL (NIP-98 signs the URL).
func TestAPI_OldPathsMoved(t *testing.T) {
	e := startEnv(t)
	alice := newUser()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, c := range []struct{ method, old, want string }{
		{"GET", "/api/agent/stats", "/api/v1/agent/stats"},
		{"GET", "/api/agent/config/global", "/api/v1/agent/config/global"},
		{"DELETE", "/api/agent/items/abc", "/api/v1/agent/items/abc"},
		{"POST", "/api/agent/flush", "/api/v1/agent/flush"},
		{"GET", "/api/privacy/export?npub=x&format=markdown", "/api/v1/export?npub=x&format=markdown"},
		{"POST", "/api/privacy/forget", "/api/v1/privacy/forget"},
		{"POST", "/api/privacy/destroy", "/api/v1/privacy/destroy"},
		{"GET", "/api/privacy/audit?npub=y", "/api/v1/privacy/audit?npub=y"},
	} {
		req, _ := http.NewRequest(c.method, e.httpURL(c.old), nil)
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != c.want {
			t.Errorf("%s %s: %d to %q, want 308 to %q", c.method, c.old, resp.StatusCode, resp.Header.Get("Location"), c.want)
		}
	}

	req, _ := http.NewRequest("GET", e.httpURL("/api/privacy/audit"), nil)
	req.Header.Set("Authorization", e.nip98(alice, "GET", e.httpURL("/api/v1/privacy/audit")))
	if r := do(t, req); r.code != http.StatusOK {
		t.Fatalf("followed with a header signed for the new URL: %d %s", r.code, r.body)
	}
	req, _ = http.NewRequest("GET", e.httpURL("/api/privacy/audit"), nil)
	req.Header.Set("Authorization", e.nip98(alice, "GET", e.httpURL("/api/privacy/audit")))
	if r := do(t, req); r.code != http.StatusUnauthorized {
		t.Fatalf("followed with a header signed for the old URL: %d %s, want 401", r.code, r.body)
	}
}
