package node_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/internal/wsclient"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/relay"
)

// testEnv is a real relay over a real badger store in a temp dir, served on
// a random loopback port, with the keys the tests act as.
type testEnv struct {
	t     *testing.T
	dir   string
	opts  node.Options
	n     *node.Node
	r     *relay.Relay // n's relay
	srv   *httptest.Server
	url   string
	owner user
	agent user
	relay user
	// solo: the only node on its PostgreSQL database (the store matrix),
	// which is ready once it has won the agent's election
	solo bool
	// loading: start returns while the search index still loads (as
	// serve does it); otherwise start waits until search is ready
	loading bool
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
func startEnv(t *testing.T, mods ...func(*node.Options)) *testEnv {
	t.Helper()
	dir := t.TempDir()
	keys, err := relay.LoadKeys(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	e := &testEnv{t: t, dir: dir, owner: newUser(), agent: userFromSecret(keys.AgentSecret), relay: userFromSecret(keys.RelaySecret)}
	e.opts = node.Options{Options: relay.Options{
		DataDir:         dir,
		Name:            "snowclaw-test",
		Version:         "test",
		Owner:           e.owner.pk,
		Keys:            keys,
		Limits:          policies.DefaultLimits(),
		MaxMessageBytes: 512 * 1024,
		Logger:          testLogger(t),
	},
		GroupDefaults:    policies.GroupInfo{Private: true, Restricted: true},
		MaxGroupEventAge: time.Hour,
		PostgresURL:      testPostgresURL(t),
		// the index loads behind the serving relay, as snowclaw serve has it
		Search: node.SearchOptions{Background: true},
	}
	url := e.opts.PostgresURL
	for _, m := range mods {
		m(&e.opts)
	}
	e.solo = url != "" && e.opts.PostgresURL == url
	e.start()
	t.Cleanup(e.stop)
	return e
}

func (e *testEnv) start() {
	e.t.Helper()
	n, err := node.New(context.Background(), e.opts)
	if err != nil {
		e.t.Fatal(err)
	}
	e.n, e.r = n, n.Relay()
	if ix := n.Search(); ix != nil && !e.loading {
		select {
		case <-ix.Loaded():
			if err := ix.State().Err; err != nil {
				e.t.Fatalf("search index: %v", err)
			}
		case <-time.After(testwait.Scaled(60 * time.Second)):
			e.t.Fatal("the search index was not ready within 60 s")
		}
	}
	if e.solo && e.opts.Agent.Enabled {
		// a node alone on its database leads at once; the tests written
		// for one process expect its agent running when start returns
		testwait.Within(e.t, 30*time.Second, "the only node on its database to take the agent's lead", n.Leading)
	}
	e.srv = httptest.NewServer(n.Handler())
	e.url = "ws" + strings.TrimPrefix(e.srv.URL, "http")
}

func (e *testEnv) stop() {
	if e.srv == nil {
		return
	}
	e.srv.CloseClientConnections()
	e.srv.Close()
	e.n.Close()
	e.srv = nil
}

// restart stops the relay and starts it again on the same data dir.
func (e *testEnv) restart() {
	e.stop()
	e.start()
}

// connect opens a websocket client, authenticated as u unless u is nil.
func (e *testEnv) connect(u *user) *wsclient.Client {
	e.t.Helper()
	c, err := wsclient.Dial(e.url)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	if u != nil {
		if err := c.Auth(u.sk); err != nil {
			e.t.Fatalf("auth as %s: %v", u.pk[:8], err)
		}
	}
	return c
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

// answerWait bounds a test client's wait for the right answer (before
// testwait's scale): an OK, an EOSE, a COUNT, retries of a "try again"
// refusal included. It is far above what an answer takes on an idle
// machine; it only decides how long a failing test hangs.
const answerWait = 20 * time.Second

// answering is the context of one request that is answered, retries
// included, within answerWait.
func answering() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), testwait.Scaled(answerWait))
}

// publish sends evt once and returns the relay's first answer, a
// retryable refusal included: for the tests of that refusal, and of
// answers that may be either.
func publish(c *wsclient.Client, evt nostr.Event) error {
	ctx, cancel := answering()
	defer cancel()
	return c.Publish(ctx, evt)
}

// mustPublish publishes evt as a client keeping the relay's contract
// does: a "try again" refusal (an instance behind the shared store) is
// sent again until answerWait; any other refusal fails the test.
func (e *testEnv) mustPublish(c *wsclient.Client, evt nostr.Event) nostr.Event {
	e.t.Helper()
	ctx, cancel := answering()
	defer cancel()
	if err := c.PublishAgain(ctx, evt); err != nil {
		e.t.Fatalf("publish kind %d: %v", evt.Kind, err)
	}
	return evt
}

// refusedWith asserts a publish is refused with a reason starting prefix;
// a "try again" that is not the refusal awaited is sent again, as by
// mustPublish.
func (e *testEnv) refusedWith(c *wsclient.Client, evt nostr.Event, prefix string) {
	e.t.Helper()
	ctx, cancel := answering()
	defer cancel()
	err := c.Publish(ctx, evt)
	if r, ok := errors.AsType[*wsclient.Refused](err); ok && snowclaw.Retryable(r.Reason) && !strings.HasPrefix(r.Reason, prefix) {
		err = c.PublishAgain(ctx, evt)
	}
	if err == nil {
		e.t.Fatalf("kind %d accepted, want refusal %q", evt.Kind, prefix)
	}
	if !strings.Contains(err.Error(), "msg: "+prefix) {
		e.t.Fatalf("kind %d refused with %q, want prefix %q", evt.Kind, err, prefix)
	}
}

// fetch runs one REQ to EOSE and returns the events, or the CLOSED reason
// of a refusal; a "try again" refusal is asked again until answerWait.
func fetch(t *testing.T, c *wsclient.Client, f nostr.Filter) ([]*nostr.Event, string) {
	t.Helper()
	ctx, cancel := answering()
	defer cancel()
	evs, closed, err := c.FetchAgain(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	return evs, closed
}

// fetchOnce is fetch without retries: the first answer, a "try again"
// refusal included, for the tests of that refusal.
func fetchOnce(t *testing.T, c *wsclient.Client, f nostr.Filter) ([]*nostr.Event, string) {
	t.Helper()
	evs, closed, err := c.Fetch(f, testwait.Scaled(answerWait))
	if err != nil {
		t.Fatal(err)
	}
	return evs, closed
}

// count is a NIP-45 COUNT, asked again after a "try again" refusal; it
// fails t on no answer.
func count(t *testing.T, c *wsclient.Client, f nostr.Filter) (int64, string) {
	t.Helper()
	ctx, cancel := answering()
	defer cancel()
	n, closed, err := c.CountAgain(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	return n, closed
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

// rawConn is a client for tests that drive the protocol frame by frame.
type rawConn struct {
	*wsclient.Client
	t *testing.T
}

func (e *testEnv) raw() *rawConn {
	e.t.Helper()
	return &rawConn{Client: e.connect(nil), t: e.t}
}

func (rc *rawConn) send(v ...any) {
	rc.t.Helper()
	if err := rc.Send(v...); err != nil {
		rc.t.Fatal(err)
	}
}

// waitFor is the first frame labelled label about id, waiting up to
// timeout (Scaled).
func (rc *rawConn) waitFor(label, id string, timeout time.Duration) ([]json.RawMessage, bool) {
	return rc.WaitFor(label, id, testwait.Scaled(timeout))
}

// waitAny is the first frame about id carrying one of labels.
func (rc *rawConn) waitAny(id string, timeout time.Duration, labels ...string) ([]json.RawMessage, bool) {
	return rc.WaitAny(id, testwait.Scaled(timeout), labels...)
}

func (rc *rawConn) all() string { return rc.All() }

func (rc *rawConn) eventIDs(sub string) map[string]bool { return rc.EventIDs(sub) }

// auth answers the relay's NIP-42 challenge as u; the url is the one the
// client dialled.
func (rc *rawConn) auth(_ string, u user) {
	rc.t.Helper()
	if err := rc.Auth(u.sk); err != nil {
		rc.t.Fatalf("auth as %s: %v", u.pk[:8], err)
	}
}

// testClock is a relay's clock (Options.Clock) that a test moves: the
// wall clock plus what Advance added, so signed events' created_at stay
// within the relay's limits.
type testClock struct{ ahead atomic.Int64 }

func (c *testClock) Now() time.Time { return time.Now().Add(time.Duration(c.ahead.Load())) }

// Advance moves the clock d forward.
func (c *testClock) Advance(d time.Duration) { c.ahead.Add(int64(d)) }
