package groupread

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/nbd-wtf/go-nostr"
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
