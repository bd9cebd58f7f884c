package node_test

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/wsclient"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/relay"
)

// nginxConf is the shipped nginx configuration: its forwarded headers
// (proxy_set_header X-Forwarded-*) and the trusted_proxies its comment
// tells the relay to use.
type nginxConf struct {
	headers map[string]string // name → nginx value expression
	trusted []string
}

func readNginxConf(t *testing.T) nginxConf {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "deploy", "nginx.conf"))
	if err != nil {
		t.Fatal(err)
	}
	conf := nginxConf{headers: map[string]string{}}
	for _, m := range regexp.MustCompile(`(?m)^\s*proxy_set_header\s+(X-Forwarded-\S+)\s+([^;]+);`).FindAllStringSubmatch(string(b), -1) {
		conf.headers[http.CanonicalHeaderKey(m[1])] = strings.TrimSpace(m[2])
	}
	m := regexp.MustCompile(`trusted_proxies = \[([^\]]*)\]`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatal("deploy/nginx.conf does not say which trusted_proxies go with it")
	}
	for _, p := range strings.Split(m[1], ",") {
		conf.trusted = append(conf.trusted, strings.Trim(strings.TrimSpace(p), `"`))
	}
	for _, h := range []string{"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
		if conf.headers[h] == "" {
			t.Fatalf("deploy/nginx.conf does not set %s", h)
		}
	}
	return conf
}

// forward is what nginx, run with conf, sends upstream for a client at
// clientAddr that sent X-Forwarded-For sent ("" for none), by nginx's
// documented variables.
func (conf nginxConf) forward(t *testing.T, clientAddr, sent string) http.Header {
	t.Helper()
	vars := map[string]string{
		"$remote_addr": clientAddr,
		"$host":        "relay.example.com",
		"$scheme":      "https",
		// the client's X-Forwarded-For with $remote_addr appended, or
		// $remote_addr alone when it sent none
		"$proxy_add_x_forwarded_for": clientAddr,
		"$http_x_forwarded_for":      sent,
	}
	if sent != "" {
		vars["$proxy_add_x_forwarded_for"] = sent + ", " + clientAddr
	}
	h := http.Header{}
	for name, expr := range conf.headers {
		v, ok := vars[expr]
		if !ok {
			t.Fatalf("deploy/nginx.conf sets %s to %s, which this test does not know: teach it nginx's meaning", name, expr)
		}
		if v != "" {
			h.Set(name, v)
		}
	}
	return h
}

// TestDeploy_NginxForwardedFor: the relay behind deploy/nginx.conf, set
// up as its comment says, counts per-IP limits against the client nginx
// saw. A client that forges X-Forwarded-For (nginx appends to it) neither
// escapes its own allowance nor spends another client's.
func TestDeploy_NginxForwardedFor(t *testing.T) {
	conf := readNginxConf(t)
	proxies, err := relay.ParseTrustedProxies(conf.trusted)
	if err != nil {
		t.Fatal(err)
	}
	// the test is nginx: it connects from loopback, which conf trusts
	e := startEnv(t, func(o *node.Options) {
		o.HTTP.TrustedProxies = proxies
		o.ConnRateIP = policies.Rate{PerSecond: 0.001, Burst: 2}
	})
	refused := func(clientAddr, sent string) bool {
		t.Helper()
		c, err := wsclient.DialHeader(e.url, conf.forward(t, clientAddr, sent))
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
	const mallory, alice = "203.0.113.7", "203.0.113.8"
	for i, forged := range []string{"198.51.100.1", "198.51.100.2, 198.51.100.3"} {
		if refused(mallory, forged) {
			t.Fatalf("mallory's connection %d refused within her allowance", i+1)
		}
	}
	if !refused(mallory, "198.51.100.4") {
		t.Fatal("a forged X-Forwarded-For got mallory a third connection: the forged entry was her identity")
	}
	if refused(alice, mallory) {
		t.Fatal("alice, naming mallory in her X-Forwarded-For, was counted as mallory")
	}
	if refused(alice, "") {
		t.Fatal("alice without a header of her own was refused")
	}
}
