package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// ownerClient calls the relay's owner API with NIP-98 auth. The memory
// and config commands are clients of a running relay, like search: the
// agent's RAM is the truth, so they ask the agent rather than the store.
type ownerClient struct {
	relay string // ws(s):// URL
	sk    string // owner's secret, hex
	http  *http.Client
}

// ownerFlags registers --relay and --sec and returns a constructor that
// resolves them (the secret may come from $SNOWCLAW_SEC).
func ownerFlags(fs *flag.FlagSet, environ []string) func() (*ownerClient, error) {
	relayURL := relayFlag(fs, environ, "relay URL")
	sec := fs.String("sec", "", "owner's nsec or hex secret (default $SNOWCLAW_SEC)")
	return func() (*ownerClient, error) {
		s := *sec
		if s == "" {
			s = envValue(environ, "SNOWCLAW_SEC")
		}
		if s == "" {
			return nil, fmt.Errorf("the owner's key is needed: pass --sec nsec1… or set SNOWCLAW_SEC")
		}
		sk, err := snowclaw.ParseSecret(s)
		if err != nil {
			return nil, fmt.Errorf("--sec: %w", err)
		}
		return &ownerClient{relay: *relayURL, sk: sk, http: &http.Client{Timeout: time.Minute}}, nil
	}
}

// relayFlag registers --relay, the relay a client command talks to: by
// default $SNOWCLAW_RELAY, else the address serve listens on by default.
// The flag package prints the default it ends up with, so the usage only
// says where it comes from.
func relayFlag(fs *flag.FlagSet, environ []string, usage string) *string {
	def := envValue(environ, "SNOWCLAW_RELAY")
	if def == "" {
		def = "ws://127.0.0.1:3334"
	}
	return fs.String("relay", def, usage+"; $SNOWCLAW_RELAY sets the default")
}

func envValue(environ []string, name string) string {
	v := ""
	for _, kv := range environ {
		if s, ok := strings.CutPrefix(kv, name+"="); ok {
			v = s
		}
	}
	return v
}

// httpURL turns the relay's websocket URL into its HTTP one.
func (c *ownerClient) httpURL(path string) (string, error) {
	u, err := url.Parse(c.relay)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("--relay %q is not a URL", c.relay)
	}
	switch u.Scheme {
	case "ws", "http":
		u.Scheme = "http"
	case "wss", "https":
		u.Scheme = "https"
	default:
		return "", fmt.Errorf("--relay %q: want ws:// or wss://", c.relay)
	}
	path, query, _ := strings.Cut(path, "?")
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	u.RawQuery = query
	return u.String(), nil
}

// call sends one request and decodes the JSON answer into out; an error
// answer becomes an error carrying the relay's message.
func (c *ownerClient) call(ctx context.Context, method, path string, body, out any) error {
	full, err := c.httpURL(path)
	if err != nil {
		return err
	}
	var payload []byte
	if body != nil {
		if payload, err = json.Marshal(body); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, full, bytes.NewReader(payload))
	if err != nil {
		return err
	}
	auth, err := c.authHeader(method, full, payload)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("is the relay running at %s? %w", c.relay, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if resp.StatusCode >= 300 {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(raw, &e) == nil && e.Error != "" {
			return &relayError{msg: e.Error}
		}
		return fmt.Errorf("relay answered %s", resp.Status)
	}
	switch o := out.(type) {
	case nil:
		return nil
	case *rawText:
		*o = raw
		return nil
	}
	return json.Unmarshal(raw, out)
}

// relayError is the relay's own answer to a refused call, its NIP-01
// prefix included.
type relayError struct{ msg string }

func (e *relayError) Error() string { return "relay: " + e.msg }

// authHeader is a NIP-98 authorization for one request. The relay takes
// each event id once and signing is deterministic, so a nonce keeps two
// identical requests within one second from sharing an id.
func (c *ownerClient) authHeader(method, full string, payload []byte) (string, error) {
	nonce := make([]byte, 8)
	rand.Read(nonce)
	evt := nostr.Event{Kind: 27235, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"u", full}, {"method", method}, {"nonce", hex.EncodeToString(nonce)}}}
	if len(payload) > 0 {
		sum := sha256.Sum256(payload)
		evt.Tags = append(evt.Tags, nostr.Tag{"payload", hex.EncodeToString(sum[:])})
	}
	if err := evt.Sign(c.sk); err != nil {
		return "", err
	}
	raw, _ := json.Marshal(evt)
	return "Nostr " + base64.StdEncoding.EncodeToString(raw), nil
}

// printJSON shows an answer indented.
func printJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}
