// Package ollamahost holds what the two Ollama clients (search's
// embedder and the agent's chat model) share: reading the host setting,
// telling an unreachable server from other failures, and the error type
// that carries a helpful message while unwrapping to its causes.
package ollamahost

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
	"unicode/utf8"
)

// Parse accepts "http://host:port[/path]", "https://…" or a bare
// "host:port" (http), as OLLAMA_HOST does. Query, fragment and user info
// are dropped: the api client appends its own paths.
func Parse(host string) (*url.URL, error) {
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

// Unreachable reports a failure to connect at all (refused, no such
// host, dial error): the server is down or the host is wrong.
func Unreachable(err error) bool {
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

// Error is an error with its own message that unwraps to its causes, so
// callers match sentinels and api.StatusError with errors.Is/As.
type Error struct {
	Msg  string
	Errs []error
}

func (e *Error) Error() string   { return e.Msg }
func (e *Error) Unwrap() []error { return e.Errs }

// Clip shortens s to at most n bytes on a rune boundary, marking the cut.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
