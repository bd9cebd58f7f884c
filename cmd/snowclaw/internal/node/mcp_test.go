package node_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/snowclaw/snowclaw/agent"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/mcptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// nip98Transport signs every request with NIP-98, as an MCP host holding
// the user's key would: u = the request URL, method as sent, payload =
// the body's sha256. With public set it plays a client behind a reverse
// proxy: it signs the public URL and sends the public Host.
type nip98Transport struct{ sk, public string }

func (t nip98Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	u := req.URL.String()
	if t.public != "" {
		pu, _ := url.Parse(t.public)
		req.Host = pu.Host
		u = t.public
	}
	evt := nostr.Event{Kind: 27235, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"u", u}, {"method", req.Method}, nonceTag()}}
	if len(body) > 0 {
		sum := sha256.Sum256(body)
		evt.Tags = append(evt.Tags, nostr.Tag{"payload", hex.EncodeToString(sum[:])})
	}
	if err := evt.Sign(t.sk); err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(evt)
	req.Header.Set("Authorization", "Nostr "+base64.StdEncoding.EncodeToString(raw))
	return http.DefaultTransport.RoundTrip(req)
}

// bearerTransport sends a fixed bearer token.
type bearerTransport struct{ token string }

func (t bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+t.token)
	return http.DefaultTransport.RoundTrip(req)
}

// startMCPEnv is a relay with search and the agent (no model: the agent
// writes text memories for MCP callers).
func startMCPEnv(t *testing.T, mods ...func(*node.Options)) *testEnv {
	t.Helper()
	return startEnv(t, append([]func(*node.Options){withSearch, func(o *node.Options) {
		o.Agent = node.AgentOptions{Enabled: true, Options: agent.Options{Name: "Snowclaw", FlushInterval: 200 * time.Millisecond}}
	}}, mods...)...)
}

func (e *testEnv) mcpURL() string { return "http" + strings.TrimPrefix(e.url, "ws") + "/mcp" }

// mcpConnect opens an MCP client session over streamable HTTP with rt
// carrying the credentials.
func (e *testEnv) mcpConnect(rt http.RoundTripper) (*mcp.ClientSession, error) {
	tr := &mcp.StreamableClientTransport{Endpoint: e.mcpURL(), HTTPClient: &http.Client{Transport: rt, Timeout: 30 * time.Second}, MaxRetries: -1}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "relay-test", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err == nil {
		e.t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func (e *testEnv) mustMCP(rt http.RoundTripper) *mcp.ClientSession {
	e.t.Helper()
	cs, err := e.mcpConnect(rt)
	if err != nil {
		e.t.Fatalf("mcp connect: %v", err)
	}
	return cs
}

// TestMCP_NIP98PerRequest: an MCP client signing each request with NIP-98
// stores, finds, reads and forgets its own private memory; another key
// neither finds nor reads it; and no session id is handed out, so there
// is no session another key could borrow.
func TestMCP_NIP98PerRequest(t *testing.T) {
	e := startMCPEnv(t)
	alice, bob := newUser(), newUser()
	ac := e.mustMCP(nip98Transport{sk: alice.sk})
	if ac.ID() != "" {
		t.Fatalf("the relay issued session id %q; sessions would outlive the signed request", ac.ID())
	}
	tools, err := ac.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) != 5 {
		t.Fatalf("tools/list: %v %+v", err, tools)
	}

	var stored struct{ Memory snowclaw.MemoryView }
	if msg := mcptest.Call(t, ac, "memory_store", map[string]any{"text": "Alice's cat is called Miso and hates thunderstorms",
		"topic": "user/alice/pets", "detail": "adopted in March"}, &stored); msg != "" {
		t.Fatalf("memory_store: %s", msg)
	}
	m := stored.Memory
	if len(m.ID) != 64 || m.Tier != snowclaw.TierPrivate || m.Person != alice.pk || !strings.Contains(m.Text, "Miso") {
		t.Fatalf("stored %+v", m)
	}
	hit := mcptest.Find(t, ac, "Miso thunderstorms", m.ID, 5*time.Second)
	if hit == nil || !strings.Contains(hit.Text, "called Miso") || hit.Tier != snowclaw.TierPrivate || hit.Score <= 0 || hit.Origin != "local" {
		t.Fatalf("alice does not find her memory: %+v", hit)
	}
	if stored := mustFetch(t, e.connect(&alice), nostr.Filter{IDs: []string{m.ID}}); len(stored) != 1 || strings.Contains(stored[0].Content, "Miso") {
		t.Fatalf("private memory stored in plaintext: %v", stored)
	}
	var detail snowclaw.MemoryDetail
	if msg := mcptest.Call(t, ac, "memory_get", map[string]any{"id": m.ID}, &detail); msg != "" || detail.Memory.Detail != "adopted in March" {
		t.Fatalf("memory_get: %q %+v", msg, detail.Memory)
	}
	var listed struct{ Memories []snowclaw.MemoryView }
	if msg := mcptest.Call(t, ac, "memory_list", map[string]any{"tier": "private"}, &listed); msg != "" || len(listed.Memories) == 0 || listed.Memories[0].ID != m.ID {
		t.Fatalf("memory_list: %q %+v", msg, listed)
	}

	bc := e.mustMCP(nip98Transport{sk: bob.sk})
	if h := mcptest.Find(t, bc, "Miso thunderstorms", m.ID, 0); h != nil {
		t.Fatalf("bob finds alice's private memory: %+v", h)
	}
	if msg := mcptest.Call(t, bc, "memory_get", map[string]any{"id": m.ID}, &detail); !strings.HasPrefix(msg, "invalid: no ") {
		t.Fatalf("bob's memory_get: %q", msg)
	}
	var forgot snowclaw.ForgetResponse
	if msg := mcptest.Call(t, bc, "memory_forget", map[string]any{"id": m.ID}, &forgot); !strings.HasPrefix(msg, "invalid: no ") {
		t.Fatalf("bob's memory_forget: %q", msg)
	}

	if msg := mcptest.Call(t, ac, "memory_forget", map[string]any{"id": m.ID}, &forgot); msg != "" || forgot.Deleted < 1 {
		t.Fatalf("memory_forget: %q %+v", msg, forgot)
	}
	if msg := mcptest.Call(t, ac, "memory_get", map[string]any{"id": m.ID}, &detail); !strings.HasPrefix(msg, "invalid: no ") {
		t.Fatalf("memory_get after forget: %q", msg)
	}
	if h := mcptest.Find(t, ac, "Miso thunderstorms", m.ID, 0); h != nil {
		t.Fatalf("forgotten memory still found: %+v", h)
	}
}

// TestMCP_Refused: /mcp answers nothing without valid credentials.
func TestMCP_Refused(t *testing.T) {
	e := startMCPEnv(t, func(o *node.Options) { o.MCP.Token = "correct horse battery staple" })
	init := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	alice := newUser()
	signed := func(u, method string, body []byte) string {
		evt := nostr.Event{Kind: 27235, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"u", u}, {"method", method}, nonceTag()}}
		sum := sha256.Sum256(body)
		evt.Tags = append(evt.Tags, nostr.Tag{"payload", hex.EncodeToString(sum[:])})
		evt.Sign(alice.sk)
		raw, _ := json.Marshal(evt)
		return "Nostr " + base64.StdEncoding.EncodeToString(raw)
	}
	cases := []struct{ name, auth, want string }{
		{"NoAuth", "", "auth-required:"},
		{"WrongBearer", "Bearer hunter2", "auth-required:"},
		{"OtherURL", signed(strings.TrimSuffix(e.mcpURL(), "/mcp")+"/api/v1/search", "POST", init), "invalid:"},
		{"OtherMethod", signed(e.mcpURL(), "GET", init), "invalid:"},
		{"OtherBody", signed(e.mcpURL(), "POST", []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)), "invalid:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", e.mcpURL(), bytes.NewReader(init))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if c.auth != "" {
				req.Header.Set("Authorization", c.auth)
			}
			if code, msg := doJSON(t, req); code != http.StatusUnauthorized || !strings.HasPrefix(msg, c.want) {
				t.Fatalf("status %d error %q, want 401 %q", code, msg, c.want)
			}
		})
	}
	// the SDK's client gets no session either
	if _, err := e.mcpConnect(http.DefaultTransport); err == nil {
		t.Fatal("an unauthenticated MCP client connected")
	}
}

// TestMCP_BearerToken: the configured token acts as the configured
// identity, the owner by default.
func TestMCP_BearerToken(t *testing.T) {
	const token = "s3cret-mcp-token"
	t.Run("Owner", func(t *testing.T) {
		e := startMCPEnv(t, func(o *node.Options) { o.MCP.Token = token })
		cs := e.mustMCP(bearerTransport{token})
		// public memories are the owner's to store: this succeeds only as the owner
		var stored struct{ Memory snowclaw.MemoryView }
		if msg := mcptest.Call(t, cs, "memory_store", map[string]any{"text": "The relay moves to the new datacenter on May 3", "tier": "public", "topic": "project/infra"}, &stored); msg != "" {
			t.Fatalf("owner's public store: %s", msg)
		}
		if stored.Memory.Tier != snowclaw.TierPublic {
			t.Fatalf("stored %+v", stored.Memory)
		}
		// and anyone can find it
		other := e.mustMCP(nip98Transport{sk: newUser().sk})
		if h := mcptest.Find(t, other, "datacenter", stored.Memory.ID, 5*time.Second); h == nil || !strings.Contains(h.Text, "May 3") {
			t.Fatalf("public memory not found by another key: %+v", h)
		}
	})
	t.Run("Identity", func(t *testing.T) {
		alice := newUser()
		e := startMCPEnv(t, func(o *node.Options) { o.MCP.Token, o.MCP.Identity = token, alice.pk })
		cs := e.mustMCP(bearerTransport{token})
		var stored struct{ Memory snowclaw.MemoryView }
		if msg := mcptest.Call(t, cs, "memory_store", map[string]any{"text": "x", "tier": "public"}, &stored); !strings.HasPrefix(msg, "restricted:") {
			t.Fatalf("alice's public store: %q", msg)
		}
		if msg := mcptest.Call(t, cs, "memory_store", map[string]any{"text": "Alice prefers tea over coffee"}, &stored); msg != "" || stored.Memory.Person != alice.pk {
			t.Fatalf("alice's private store: %q %+v", msg, stored.Memory)
		}
		// alice herself, over NIP-98, reads what the token stored
		ac := e.mustMCP(nip98Transport{sk: alice.sk})
		var detail snowclaw.MemoryDetail
		if msg := mcptest.Call(t, ac, "memory_get", map[string]any{"id": stored.Memory.ID}, &detail); msg != "" || detail.Memory.Text != "Alice prefers tea over coffee" {
			t.Fatalf("memory_get as alice: %q %+v", msg, detail.Memory)
		}
	})
	t.Run("NoToken", func(t *testing.T) {
		e := startMCPEnv(t)
		if _, err := e.mcpConnect(bearerTransport{""}); err == nil {
			t.Fatal("an empty bearer token connected while no token is configured")
		}
	})
}

// TestMCP_BehindProxy: with a public service URL the relay listens on
// loopback but sees the proxy's Host; a request signed for the public
// /mcp URL is served (the SDK's DNS-rebinding guard would refuse it), and
// one for another host is not.
func TestMCP_BehindProxy(t *testing.T) {
	e := startMCPEnv(t, func(o *node.Options) { o.ServiceURL = "wss://relay.example.com" })
	alice := newUser()
	cs := e.mustMCP(nip98Transport{sk: alice.sk, public: "https://relay.example.com/mcp"})
	var stored struct{ Memory snowclaw.MemoryView }
	if msg := mcptest.Call(t, cs, "memory_store", map[string]any{"text": "Alice is on call the first week of June"}, &stored); msg != "" || stored.Memory.Person != alice.pk {
		t.Fatalf("memory_store through the proxy: %q %+v", msg, stored.Memory)
	}
	// a header signed for another site, replayed here under that site's Host
	hc := &http.Client{Transport: nip98Transport{sk: alice.sk, public: "https://evil.example.net/mcp"}}
	req, _ := http.NewRequest("POST", e.mcpURL(), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Error string }
	json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != http.StatusForbidden || !strings.HasPrefix(body.Error, "restricted:") {
		t.Fatalf("request under another host: %d %q", resp.StatusCode, body.Error)
	}
}
