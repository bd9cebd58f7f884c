package ollama

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
	"unicode/utf8"
)

// parseHost accepts "http://host:port[/path]", "https://…" or a bare
// "host:port" (http), as OLLAMA_HOST does. Query, fragment and user info
// are dropped: the api client appends its own paths.
func parseHost(host string) (*url.URL, error) {
	raw := host
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("ollama: invalid host %q: %v", host, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("ollama: invalid host %q: scheme must be http or https", host)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("ollama: invalid host %q: no host name", host)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u, nil
}

// unreachable reports a failure to connect at all (refused, no such
// host, dial error): the server is down or the host is wrong.
func unreachable(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return true
	}
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "dial"
}

// clip shortens s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
