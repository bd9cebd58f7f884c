package groupread

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/internal/wsclient"
)

// AgentOf reads the relay's agent key from its health answer
// (GET <base>/api/v1/health, "agent"), the key a client pins to trust
// key deliveries. base is the relay's http(s) URL.
func AgentOf(client *http.Client, base string) func(ctx context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		req, err := http.NewRequestWithContext(ctx, "GET", base+"/api/v1/health", nil)
		if err != nil {
			return "", err
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("GET /api/v1/health: %s", resp.Status)
		}
		var h struct {
			Agent string `json:"agent"`
		}
		if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&h); err != nil {
			return "", fmt.Errorf("GET /api/v1/health: %w", err)
		}
		if h.Agent == "" {
			return "", errors.New("the relay's health answer names no agent key")
		}
		return h.Agent, nil
	}
}

// Dialer reads the relay at url as secret's owner: each call dials,
// answers the NIP-42 challenge and runs one REQ to EOSE, so a long-lived
// client (snowclaw mcp) holds no connection that could go stale.
func Dialer(url, secret string, timeout time.Duration) Fetch {
	return func(ctx context.Context, f nostr.Filter) ([]*nostr.Event, error) {
		c, err := wsclient.Dial(url)
		if err != nil {
			return nil, fmt.Errorf("connecting to %s: %w", url, err)
		}
		defer c.Close()
		if err := c.Auth(secret); err != nil {
			return nil, fmt.Errorf("authenticating to %s: %w", url, err)
		}
		return Over(c, timeout)(ctx, f)
	}
}

// Over reads through a connection already authenticated as the member.
func Over(c *wsclient.Client, timeout time.Duration) Fetch {
	return func(ctx context.Context, f nostr.Filter) ([]*nostr.Event, error) {
		if d, ok := ctx.Deadline(); ok && time.Until(d) < timeout {
			timeout = time.Until(d)
		}
		evs, closed, err := c.Fetch(f, timeout)
		if err != nil {
			return nil, err
		}
		if closed != "" {
			return evs, fmt.Errorf("the relay closed the request: %s", closed)
		}
		return evs, nil
	}
}

// ForMember is secret's keyring against the relay at relayURL (ws://,
// wss://, http:// or https://): the agent key comes from its health
// answer, the deliveries and sealed events through fetch, or, when fetch
// is nil, through a connection dialled per read (the Fetch returned).
func ForMember(relayURL, secret string, fetch Fetch) (*Keyring, Fetch, error) {
	u, err := url.Parse(relayURL)
	if err != nil || u.Host == "" {
		return nil, nil, fmt.Errorf("relay %q is not a URL", relayURL)
	}
	web, ws := *u, *u
	switch u.Scheme {
	case "ws", "http":
		web.Scheme, ws.Scheme = "http", "ws"
	case "wss", "https":
		web.Scheme, ws.Scheme = "https", "wss"
	default:
		return nil, nil, fmt.Errorf("relay %q: want ws(s):// or http(s)://", relayURL)
	}
	web.Path = strings.TrimSuffix(web.Path, "/")
	if fetch == nil {
		fetch = Dialer(ws.String(), secret, 30*time.Second)
	}
	keys, err := NewKeyring(secret, AgentOf(&http.Client{Timeout: 30 * time.Second}, web.String()), fetch)
	return keys, fetch, err
}

// Shown is what a printout shows of evt: a group-sealed memory opened
// with the member's keys, or a note saying which key it lacks (never its
// ciphertext); anything else as it is. k may be nil (no key given).
func (k *Keyring) Shown(ctx context.Context, evt *nostr.Event) *nostr.Event {
	e := snowclaw.ReadEvent(evt)
	if !e.GroupSealed {
		return evt
	}
	shown := *evt
	shown.Content = "(encrypted group memory: this key holds no key that opens it)"
	if g, v, err := snowclaw.GroupSealOf(e); err == nil {
		shown.Content = fmt.Sprintf("(encrypted: no key of group %s version %d was delivered to this key)", g, v)
	}
	if k != nil {
		if plain, err := k.Open(ctx, e); err == nil {
			shown.Content = plain
		}
	}
	return &shown
}

// Printer is what a printout of search results shows of each event, for
// the key sec (nsec or hex, "" for none) that searched the relay at
// relayURL over fetch: Shown with sec's keys, read on first need.
func Printer(ctx context.Context, relayURL, sec string, fetch Fetch) func(*nostr.Event) *nostr.Event {
	var keys *Keyring
	if sk, err := snowclaw.ParseSecret(sec); sec != "" && err == nil {
		keys, _, _ = ForMember(relayURL, sk, fetch)
	}
	return func(evt *nostr.Event) *nostr.Event { return keys.Shown(ctx, evt) }
}
