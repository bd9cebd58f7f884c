package relay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/relay"
)

// testEnv is a real relay over a real badger store in a temp dir, served on
// a random loopback port, with the keys the tests act as.
type testEnv struct {
	t     *testing.T
	dir   string
	opts  relay.Options
	r     *relay.Relay
	srv   *httptest.Server
	url   string
	owner user
	agent user
	relay user
}

type user struct{ sk, pk string }

func newUser() user {
	sk := nostr.GeneratePrivateKey()
	pk, _ := nostr.GetPublicKey(sk)
	return user{sk, pk}
}

func userFromSecret(sk string) user {
	pk, _ := nostr.GetPublicKey(sk)
	return user{sk, pk}
}

func testLogger(t *testing.T) *slog.Logger {
	if os.Getenv("SNOWCLAW_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// startEnv starts a relay with test defaults (no rate limits); mods adjust
// the options before start.
func startEnv(t *testing.T, mods ...func(*relay.Options)) *testEnv {
	t.Helper()
	dir := t.TempDir()
	keys, err := relay.LoadKeys(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	e := &testEnv{t: t, dir: dir, owner: newUser(), agent: userFromSecret(keys.AgentSecret), relay: userFromSecret(keys.RelaySecret)}
	e.opts = relay.Options{
		DataDir:          dir,
		Name:             "snowclaw-test",
		Version:          "test",
		Owner:            e.owner.pk,
		Keys:             keys,
		Limits:           policies.DefaultLimits(),
		MaxMessageBytes:  512 * 1024,
		GroupDefaults:    policies.GroupInfo{Private: true, Restricted: true},
		MaxModerationAge: time.Hour,
		Logger:           testLogger(t),
	}
	for _, m := range mods {
		m(&e.opts)
	}
	e.start()
	t.Cleanup(e.stop)
	return e
}

func (e *testEnv) start() {
	e.t.Helper()
	r, err := relay.New(context.Background(), e.opts)
	if err != nil {
		e.t.Fatal(err)
	}
	e.r = r
	e.srv = httptest.NewServer(r.Handler())
	e.url = "ws" + strings.TrimPrefix(e.srv.URL, "http")
}

func (e *testEnv) stop() {
	if e.srv == nil {
		return
	}
	e.srv.CloseClientConnections()
	e.srv.Close()
	e.r.Close()
	e.srv = nil
}

// restart stops the relay and starts it again on the same data dir.
func (e *testEnv) restart() {
	e.stop()
	e.start()
}

// connect opens a go-nostr connection, authenticated as u unless u is nil.
func (e *testEnv) connect(u *user) *nostr.Relay {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := nostr.RelayConnect(ctx, e.url)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	if u == nil {
		return c
	}
	// the challenge arrives right after connecting; retry until it has
	deadline := time.Now().Add(3 * time.Second)
	for {
		err = c.Auth(ctx, func(evt *nostr.Event) error { return evt.Sign(u.sk) })
		if err == nil {
			return c
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("auth as %s: %v", u.pk[:8], err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mkEvent(u user, kind int, tags nostr.Tags, content string) nostr.Event {
	evt := nostr.Event{Kind: kind, Tags: tags, Content: content, CreatedAt: nostr.Now()}
	if evt.Tags == nil {
		evt.Tags = nostr.Tags{}
	}
	if err := evt.Sign(u.sk); err != nil {
		panic(err)
	}
	return evt
}

func publish(c *nostr.Relay, evt nostr.Event) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.Publish(ctx, evt)
}

func (e *testEnv) mustPublish(c *nostr.Relay, evt nostr.Event) nostr.Event {
	e.t.Helper()
	if err := publish(c, evt); err != nil {
		e.t.Fatalf("publish kind %d: %v", evt.Kind, err)
	}
	return evt
}

// refusedWith asserts a publish is refused with a reason starting prefix.
func (e *testEnv) refusedWith(c *nostr.Relay, evt nostr.Event, prefix string) {
	e.t.Helper()
	err := publish(c, evt)
	if err == nil {
		e.t.Fatalf("kind %d accepted, want refusal %q", evt.Kind, prefix)
	}
	if !strings.Contains(err.Error(), "msg: "+prefix) {
		e.t.Fatalf("kind %d refused with %q, want prefix %q", evt.Kind, err, prefix)
	}
}

// fetch runs one REQ to EOSE and returns the events, or the CLOSED reason.
func fetch(t *testing.T, c *nostr.Relay, f nostr.Filter) ([]*nostr.Event, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sub, err := c.Subscribe(ctx, nostr.Filters{f})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsub()
	var out []*nostr.Event
	for {
		select {
		case evt, ok := <-sub.Events:
			if !ok { // closed by a CLOSED message; fetch its reason
				select {
				case reason := <-sub.ClosedReason:
					return out, reason
				case <-time.After(time.Second):
					return out, "closed without reason"
				}
			}
			out = append(out, evt)
		case <-sub.EndOfStoredEvents:
			return out, ""
		case reason := <-sub.ClosedReason:
			return out, reason
		case <-ctx.Done():
			t.Fatalf("REQ %v: no EOSE", f)
		}
	}
}

func ids(events []*nostr.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.ID
	}
	return out
}

func contains(events []*nostr.Event, id string) bool {
	for _, e := range events {
		if e.ID == id {
			return true
		}
	}
	return false
}

// rawConn is a bare websocket client: it sees every frame the relay sends,
// so a leak cannot hide behind a client library's own filtering.
type rawConn struct {
	t    *testing.T
	conn *websocket.Conn
	mu   sync.Mutex
	msgs []json.RawMessage
	got  chan struct{}
}

func (e *testEnv) raw() *rawConn {
	e.t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial(e.url, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	rc := &rawConn{t: e.t, conn: conn, got: make(chan struct{}, 1024)}
	e.t.Cleanup(func() { conn.Close() })
	go func() {
		for {
			_, b, err := conn.ReadMessage()
			if err != nil {
				return
			}
			rc.mu.Lock()
			rc.msgs = append(rc.msgs, b)
			rc.mu.Unlock()
			select {
			case rc.got <- struct{}{}:
			default:
			}
		}
	}()
	return rc
}

func (rc *rawConn) send(v ...any) {
	rc.t.Helper()
	if err := rc.conn.WriteJSON(v); err != nil {
		rc.t.Fatal(err)
	}
}

// waitFor returns the first message whose label and second element match,
// e.g. waitFor("CLOSED", "sub1").
func (rc *rawConn) waitFor(label, id string, timeout time.Duration) ([]json.RawMessage, bool) {
	deadline := time.After(timeout)
	seen := 0
	for {
		rc.mu.Lock()
		msgs := rc.msgs[seen:]
		seen = len(rc.msgs)
		rc.mu.Unlock()
		for _, m := range msgs {
			var arr []json.RawMessage
			if json.Unmarshal(m, &arr) != nil || len(arr) < 2 {
				continue
			}
			var l, i string
			json.Unmarshal(arr[0], &l)
			json.Unmarshal(arr[1], &i)
			if l == label && (id == "" || i == id) {
				return arr, true
			}
		}
		select {
		case <-rc.got:
		case <-deadline:
			return nil, false
		}
	}
}

// all returns every frame received so far, as text.
func (rc *rawConn) all() string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var b strings.Builder
	for _, m := range rc.msgs {
		fmt.Fprintf(&b, "%s\n", m)
	}
	return b.String()
}

// auth answers the relay's NIP-42 challenge as u on a raw connection.
func (rc *rawConn) auth(url string, u user) {
	rc.t.Helper()
	arr, ok := rc.waitFor("AUTH", "", 3*time.Second)
	if !ok {
		rc.t.Fatal("no AUTH challenge from relay")
	}
	var challenge string
	json.Unmarshal(arr[1], &challenge)
	evt := mkEvent(u, nostr.KindClientAuthentication, nostr.Tags{{"relay", url}, {"challenge", challenge}}, "")
	rc.send("AUTH", evt)
	ok2, found := rc.waitFor("OK", evt.ID, 3*time.Second)
	if !found || string(ok2[2]) != "true" {
		rc.t.Fatalf("raw auth as %s failed: %s", u.pk[:8], rc.all())
	}
}

// eventIDs returns the ids of the EVENT frames received for sub.
func (rc *rawConn) eventIDs(sub string) map[string]bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make(map[string]bool)
	for _, m := range rc.msgs {
		var arr []json.RawMessage
		if json.Unmarshal(m, &arr) != nil || len(arr) < 3 {
			continue
		}
		var l, id string
		json.Unmarshal(arr[0], &l)
		json.Unmarshal(arr[1], &id)
		if l != "EVENT" || id != sub {
			continue
		}
		var evt nostr.Event
		if json.Unmarshal(arr[2], &evt) == nil {
			out[evt.ID] = true
		}
	}
	return out
}
