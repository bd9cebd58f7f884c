package node_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
)

// Attacks on the HTTP side (findings 10, 13, and 4 for NIP-98): clients
// that hold connections open by trickling, oversized bodies, replayed
// NIP-98 headers and payload tags that do not match what was sent.

// serveHTTP runs the relay's own server (Serve, with its timeouts) on a
// random port beside the test server, and returns its address.
func (e *testEnv) serveHTTP() string {
	e.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.r.Serve(ctx, ln) }()
	e.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

func shortTimeouts(o *node.Options) {
	o.HTTP.ReadHeaderTimeout = 300 * time.Millisecond
	o.HTTP.ReadTimeout = time.Second
}

// slowloris sends the start of a request and never the rest.
func slowloris(t *testing.T, addr, partial string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := io.WriteString(conn, partial); err != nil {
		t.Fatal(err)
	}
	return conn
}

// waitDropped reads until the relay closes conn, failing if it is still
// open after limit.
func waitDropped(t *testing.T, conn net.Conn, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	conn.SetReadDeadline(start.Add(limit))
	_, err := io.Copy(io.Discard, conn)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a client that never finished its request was still held after %s", limit)
	}
	return time.Since(start)
}

const slowBody = "POST /api/v1/memories HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n{\"text\":\""

// TestAttack_HTTPSlowClientsDropped: twenty clients that send headers and
// part of a body, and one that never finishes its headers, are dropped
// after the (shortened) timeouts, while a normal client is served.
func TestAttack_HTTPSlowClientsDropped(t *testing.T) {
	e := startEnv(t, shortTimeouts)
	addr := e.serveHTTP()
	var held []net.Conn
	for range 20 {
		held = append(held, slowloris(t, addr, slowBody+strings.Repeat("a", 4096)))
	}
	held = append(held, slowloris(t, addr, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: "))

	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a normal client beside the slow ones: %d", resp.StatusCode)
	}
	for i, conn := range held {
		took := waitDropped(t, conn, 10*time.Second)
		if i == 0 || i == len(held)-1 {
			t.Logf("slow client %d dropped after %s", i, took)
		}
	}
}

// TestAttack_HTTPBodyTooLarge: a body over the cap is answered 413 with a
// JSON error before anything reads it, whether its length is declared or
// it is sent chunked.
func TestAttack_HTTPBodyTooLarge(t *testing.T) {
	e := startEnv(t)
	base := "http" + strings.TrimPrefix(e.url, "ws")
	big := bytes.Repeat([]byte("a"), 2<<20)
	for _, tc := range []struct {
		name    string
		chunked bool
	}{{"content_length", false}, {"chunked", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader = bytes.NewReader(big)
			if tc.chunked {
				body = io.MultiReader(bytes.NewReader(big)) // hides the length
			}
			req, _ := http.NewRequest("POST", base+"/api/v1/memories", body)
			if tc.chunked {
				req.ContentLength = -1
			}
			req.Header.Set("Authorization", nip98Header(e.owner, base+"/api/v1/memories", "POST", nostr.Tag{"payload", sha256Hex(big)}))
			code, msg := doJSON(t, req)
			if code != http.StatusRequestEntityTooLarge || !strings.HasPrefix(msg, "invalid: ") {
				t.Fatalf("2 MiB body: %d %q, want 413 with an invalid: error", code, msg)
			}
		})
	}
}

// TestAttack_WebsocketOutlivesReadTimeout: the HTTP read timeout does not
// cut a websocket. The barrier is a slow client on the same server being
// dropped: by then the websocket, opened first, is older than the
// timeout; it still answers a ping and a REQ.
func TestAttack_WebsocketOutlivesReadTimeout(t *testing.T) {
	e := startEnv(t, shortTimeouts)
	addr := e.serveHTTP()
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	pong := make(chan struct{}, 1)
	ws.SetPongHandler(func(string) error { pong <- struct{}{}; return nil })
	frames := make(chan string, 64)
	go func() {
		defer close(frames)
		for {
			_, b, err := ws.ReadMessage()
			if err != nil {
				return
			}
			frames <- string(b)
		}
	}()

	waitDropped(t, slowloris(t, addr, slowBody), 10*time.Second)

	if err := ws.WriteControl(websocket.PingMessage, []byte("still there?"), time.Now().Add(time.Second)); err != nil {
		t.Fatalf("ping after the read timeout: %v", err)
	}
	select {
	case <-pong:
	case <-time.After(testwait.Scaled(5 * time.Second)):
		t.Fatal("no pong after the read timeout")
	}
	if err := ws.WriteJSON([]any{"REQ", "late", nostr.Filter{Kinds: []int{1}}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(testwait.Scaled(5 * time.Second))
	for {
		select {
		case f, ok := <-frames:
			if !ok {
				t.Fatal("the websocket was closed")
			}
			if strings.Contains(f, `"EOSE","late"`) {
				return
			}
		case <-deadline:
			t.Fatal("no EOSE after the read timeout")
		}
	}
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// doJSON sends req and returns the status and the API's error message.
func doJSON(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Error string }
	json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body.Error
}

// TestAttack_NIP98Replay: a captured Authorization header works once, and
// re-encoding the same signed event under another id does not make it new.
func TestAttack_NIP98Replay(t *testing.T) {
	e := startEnv(t)
	base := "http" + strings.TrimPrefix(e.url, "ws")
	url := base + "/api/v1/memories"
	header := nip98Header(e.owner, url, "GET")
	get := func(h string) (int, string) {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", h)
		return doJSON(t, req)
	}
	if code, msg := get(header); code != http.StatusOK {
		t.Fatalf("first use: %d %q", code, msg)
	}
	if code, msg := get(header); code != http.StatusUnauthorized || !strings.Contains(msg, "already used") {
		t.Fatalf("replayed header: %d %q, want 401 already used", code, msg)
	}
	raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(header, "Nostr "))
	var evt nostr.Event
	json.Unmarshal(raw, &evt)
	evt.ID = strings.Repeat("0", 64)
	raw, _ = json.Marshal(evt)
	if code, msg := get("Nostr " + base64.StdEncoding.EncodeToString(raw)); code != http.StatusUnauthorized {
		t.Fatalf("the same signed event under another id: %d %q, want 401", code, msg)
	}
}

// TestAttack_NIP98Payload: the payload tag must match the body received,
// an empty body included; without a payload tag only an empty body is
// accepted, and the refusal says what is missing.
func TestAttack_NIP98Payload(t *testing.T) {
	e := startEnv(t)
	base := "http" + strings.TrimPrefix(e.url, "ws")
	alice := newUser()
	post := func(path, body string, tags ...nostr.Tag) (int, string) {
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		req.Header.Set("Authorization", nip98Header(alice, base+path, "POST", tags...))
		return doJSON(t, req)
	}
	named := `{"ids":["` + strings.Repeat("ab", 32) + `"]}`
	for _, tc := range []struct {
		name, body string
		tags       []nostr.Tag
		ok         bool
		want       string
	}{
		{"payload_names_a_body_sent_empty", "", []nostr.Tag{{"payload", sha256Hex([]byte(named))}}, false, "does not match"},
		{"payload_of_another_body", `{"ids":[]}`, []nostr.Tag{{"payload", sha256Hex([]byte(named))}}, false, "does not match"},
		{"empty_body_without_payload", "", nil, true, ""},
		{"empty_body_with_its_payload", "", []nostr.Tag{{"payload", sha256Hex(nil)}}, true, ""},
		{"body_without_payload", `{}`, nil, false, "needs a payload tag with the sha256 of the body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// past NIP-98 the handler answers (200, or 503 with the agent
			// off): anything but 401 means the authorization was accepted
			code, msg := post("/api/v1/privacy/unfreeze", tc.body, tc.tags...)
			if tc.ok && code == http.StatusUnauthorized {
				t.Fatalf("%d %q, want the authorization accepted", code, msg)
			}
			if !tc.ok && (code != http.StatusUnauthorized || !strings.HasPrefix(msg, "invalid: ") || !strings.Contains(msg, tc.want)) {
				t.Fatalf("%d %q, want 401 invalid: …%s", code, msg, tc.want)
			}
		})
	}
}

// TestAttack_NIP98HostBehindProxy: NIP-98 names the relay by the same
// rule as NIP-42: a forwarded host counts from a trusted proxy only.
func TestAttack_NIP98HostBehindProxy(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		var mods []func(*node.Options)
		if trusted {
			mods = append(mods, withTrustedProxies("127.0.0.1/32"))
		}
		e := startEnv(t, mods...)
		base := "http" + strings.TrimPrefix(e.url, "ws")
		req, _ := http.NewRequest("GET", base+"/api/v1/memories", nil)
		req.Header.Set("X-Forwarded-Host", "relay.example.org")
		req.Header.Set("X-Forwarded-Proto", "https")
		req.Header.Set("Authorization", nip98Header(e.owner, "https://relay.example.org/api/v1/memories", "GET"))
		code, msg := doJSON(t, req)
		if (code == http.StatusOK) != trusted {
			t.Fatalf("header signed for the forwarded host, proxy trusted=%v: %d %q", trusted, code, msg)
		}
	}
}
