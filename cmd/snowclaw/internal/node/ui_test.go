package node_test

import (
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"
)

// The web UI is served from the binary at /ui/ with its security headers;
// browsers asking for / are sent there. The browser tests in test/browser
// drive it in Chromium; these check the serving side.

const wantCSP = "default-src 'self'; connect-src 'self' ws: wss:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

func httpGet(t *testing.T, url, accept string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func TestUI_Routes(t *testing.T) {
	e := startEnv(t)
	cases := []struct {
		name, path, accept string
		status             int
		location, ctype    string
		body               string
	}{
		{"browser at root goes to the UI", "/", "text/html,application/xhtml+xml,*/*;q=0.8", http.StatusFound, "/ui/", "", ""},
		{"other clients keep the plain page", "/", "", http.StatusOK, "", "text/plain; charset=utf-8", "Connect a Nostr client"},
		{"ui without slash", "/ui", "", http.StatusMovedPermanently, "/ui/", "", ""},
		{"index", "/ui/", "text/html", http.StatusOK, "", "text/html; charset=utf-8", `<script type="module" src="app.js">`},
		{"module", "/ui/app.js", "", http.StatusOK, "", "text/javascript; charset=utf-8", "extensionSigner"},
		{"stylesheet", "/ui/style.css", "", http.StatusOK, "", "text/css; charset=utf-8", "tablist"},
		{"vendored nostr-tools", "/ui/vendor/nostr.bundle.js", "", http.StatusOK, "", "text/javascript; charset=utf-8", "var NostrTools"},
		{"unknown file", "/ui/nope.js", "", http.StatusNotFound, "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := httpGet(t, e.srv.URL+c.path, c.accept)
			if resp.StatusCode != c.status {
				t.Fatalf("GET %s: status %d, want %d", c.path, resp.StatusCode, c.status)
			}
			if loc := resp.Header.Get("Location"); loc != c.location {
				t.Errorf("Location %q, want %q", loc, c.location)
			}
			if c.ctype != "" && resp.Header.Get("Content-Type") != c.ctype {
				t.Errorf("Content-Type %q, want %q", resp.Header.Get("Content-Type"), c.ctype)
			}
			if !strings.Contains(body, c.body) {
				t.Errorf("body lacks %q", c.body)
			}
			if strings.HasPrefix(c.path, "/ui/") {
				if got := resp.Header.Get("Content-Security-Policy"); got != wantCSP {
					t.Errorf("CSP %q, want %q", got, wantCSP)
				}
				if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
					t.Error("no X-Content-Type-Options: nosniff")
				}
			}
		})
	}
}

// TestUI_References checks that every file the page loads exists: the
// src/href of index.html and each module's relative imports, so a renamed
// module breaks this test rather than the page.
func TestUI_References(t *testing.T) {
	e := startEnv(t)
	ui := os.DirFS("../../../../plugins/httpapi/ui")
	refs := map[string]string{} // referenced path → who references it
	html, err := fs.ReadFile(ui, "index.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(string(html), -1) {
		refs[m[1]] = "index.html"
	}
	imports := regexp.MustCompile(`(?m)^(?:import|export)[^'"]*from '(\./[^']+)'`)
	mods, _ := fs.Glob(ui, "*.js")
	if len(mods) < 9 {
		t.Fatalf("found %d modules in plugins/httpapi/ui, want the app's nine or more", len(mods))
	}
	for _, mod := range mods {
		src, _ := fs.ReadFile(ui, mod)
		for _, m := range imports.FindAllStringSubmatch(string(src), -1) {
			refs[path.Clean(m[1])] = mod
		}
	}
	for ref, from := range refs {
		resp, _ := httpGet(t, e.srv.URL+"/ui/"+ref, "")
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s references %s: GET answers %d", from, ref, resp.StatusCode)
		}
	}
	if refs["app.js"] == "" || refs["dom.js"] == "" {
		t.Errorf("references not found, the patterns are stale: %v", refs)
	}
}
