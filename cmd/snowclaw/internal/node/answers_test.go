package node_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/pgtest"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/internal/wsclient"
)

// The answers a client reads over the websocket, each as NIP-01 (and
// NIP-42) define them: refusals start with a standard prefix, an OK names
// an event, and nothing is sent that the client did not need.

// nip01Prefixes are the machine-readable prefixes of OK and CLOSED: those
// NIP-01 standardizes and NIP-42's auth-required. Written out here, not
// read from the code under test.
var nip01Prefixes = []string{"duplicate", "pow", "blocked", "rate-limited", "invalid", "restricted", "mute", "error", "auth-required"}

func nip01Prefixed(reason string) bool {
	prefix, _, ok := strings.Cut(reason, ": ")
	if !ok {
		return false
	}
	for _, p := range nip01Prefixes {
		if prefix == p {
			return true
		}
	}
	return false
}

// frame is one frame's label and elements.
func frame(t *testing.T, raw json.RawMessage) (string, []json.RawMessage) {
	t.Helper()
	var arr []json.RawMessage
	var label string
	if json.Unmarshal(raw, &arr) != nil || len(arr) == 0 || json.Unmarshal(arr[0], &label) != nil {
		t.Fatalf("frame %s is not a labelled array", raw)
	}
	return label, arr
}

func str(raw json.RawMessage) string {
	var s string
	json.Unmarshal(raw, &s)
	return s
}

// TestSearchOff_ClosedWithNIP01Prefix: a relay with search turned off
// refuses a NIP-50 REQ and COUNT with a standard prefix, and not with a
// "try again" (search stays off, however often it is asked).
func TestSearchOff_ClosedWithNIP01Prefix(t *testing.T) {
	e := startEnv(t) // search is off unless withSearch
	c := e.connect(nil)
	_, closed := fetchOnce(t, c, nostr.Filter{Search: "plans"})
	if closed == "" {
		t.Fatal("a search on a relay with search off was answered with EOSE")
	}
	n, countClosed, err := c.Count(nostr.Filter{Search: "plans"}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if countClosed == "" {
		t.Fatalf("a search COUNT on a relay with search off was answered: %d", n)
	}
	for what, reason := range map[string]string{"REQ": closed, "COUNT": countClosed} {
		if !nip01Prefixed(reason) {
			t.Errorf("%s CLOSED %q: the prefix is not one of NIP-01's %v", what, reason, nip01Prefixes)
		}
		if snowclaw.Retryable(reason) {
			t.Errorf("%s CLOSED %q asks to try again; search stays off", what, reason)
		}
		if !strings.Contains(reason, "search") {
			t.Errorf("%s CLOSED %q does not say what is off", what, reason)
		}
	}
}

// TestAuth_MalformedAnsweredWithNotice: an AUTH from a client that carries
// no event (none, an empty object, a string as the relay's own AUTH has)
// names no event id for an OK to carry: it is answered with a NOTICE that
// says what an AUTH must carry, never an OK with an empty id, and the
// connection goes on serving.
func TestAuth_MalformedAnsweredWithNotice(t *testing.T) {
	e := startEnv(t)
	for _, msg := range []string{`["AUTH",{}]`, `["AUTH"]`, `["AUTH","x"]`} {
		t.Run(msg, func(t *testing.T) {
			rc := e.raw()
			if err := rc.SendRaw([]byte(msg)); err != nil {
				t.Fatal(err)
			}
			// answered in order: the REQ's EOSE comes after the AUTH's answer
			rc.send("REQ", "after", nostr.Filter{Kinds: []int{1}, Limit: 1})
			if _, ok := rc.waitFor("EOSE", "after", 5*time.Second); !ok {
				t.Fatalf("%s: the connection no longer serves a REQ:\n%s", msg, rc.all())
			}
			var notices []string
			for _, f := range rc.Frames() {
				label, arr := frame(t, f)
				switch label {
				case "OK":
					t.Errorf("%s answered with an OK %s: an OK names an event, and this message carries none", msg, f)
				case "NOTICE":
					notices = append(notices, str(arr[1]))
				}
			}
			if len(notices) != 1 {
				t.Fatalf("%s: %d NOTICEs, want one:\n%s", msg, len(notices), rc.all())
			}
			if n := notices[0]; !strings.HasPrefix(n, "invalid: ") || !strings.Contains(n, "AUTH") || !strings.Contains(n, "22242") {
				t.Errorf("%s: NOTICE %q does not say that a client's AUTH carries a signed kind 22242 event", msg, n)
			}
		})
	}
}

// TestAuth_ChallengeOnlyWhenNeeded: the relay sends its NIP-42 challenge
// when something needs it, not on connect. Clients that hold requests
// back while a challenge is unanswered (welshman's default socket
// policies drop EOSE until then) get public reads answered to the end;
// a read or write that needs authentication gets the challenge before
// its auth-required refusal, as NIP-42 has it, so the client holds it
// when it acts on the refusal. The quiet client's challenge
// (HTTPOptions.QuietChallenge, TestAuth_ChallengeForAQuietClient) is
// put past the test's bounds: what is tested is the client that asks.
func TestAuth_ChallengeOnlyWhenNeeded(t *testing.T) {
	e := startEnv(t, func(o *node.Options) { o.HTTP.QuietChallenge = testwait.Scaled(time.Minute) })
	alice := newUser()
	rc := e.raw()
	rc.send("REQ", "public", nostr.Filter{Kinds: []int{1}, Limit: 5})
	if _, ok := rc.waitFor("EOSE", "public", 5*time.Second); !ok {
		t.Fatalf("no EOSE for a public REQ:\n%s", rc.all())
	}
	for _, f := range rc.Frames() {
		if label, _ := frame(t, f); label != "EOSE" {
			t.Fatalf("an anonymous public REQ right after connecting got %s before its EOSE; want only EOSE:\n%s", f, rc.all())
		}
	}

	// a read that needs authentication: the challenge, then the refusal
	from := len(rc.Frames())
	rc.send("REQ", "wraps", nostr.Filter{Kinds: []int{snowclaw.KindGiftWrap}, Tags: nostr.TagMap{"p": {alice.pk}}})
	if _, ok := rc.waitFor("CLOSED", "wraps", 5*time.Second); !ok {
		t.Fatalf("no CLOSED for an anonymous gift-wrap REQ:\n%s", rc.all())
	}
	var challenge string
	for _, f := range rc.Frames()[from:] {
		label, arr := frame(t, f)
		if label == "AUTH" && challenge == "" {
			challenge = str(arr[1])
		}
		if label == "CLOSED" {
			if reason := str(arr[2]); !strings.HasPrefix(reason, "auth-required: ") {
				t.Fatalf("CLOSED %q, want auth-required:", reason)
			}
			if challenge == "" {
				t.Fatalf("the auth-required CLOSED came before any challenge:\n%s", rc.all())
			}
			break
		}
	}
	// that challenge authenticates, and the read is served
	auth := mkEvent(alice, nostr.KindClientAuthentication, nostr.Tags{{"relay", e.url}, {"challenge", challenge}}, "")
	if err := rc.Publish(context.Background(), auth, "AUTH"); err != nil {
		t.Fatalf("AUTH with the challenge sent before the refusal: %v", err)
	}
	if _, closed := fetchOnce(t, rc.Client, nostr.Filter{Kinds: []int{snowclaw.KindGiftWrap}, Tags: nostr.TagMap{"p": {alice.pk}}}); closed != "" {
		t.Fatalf("gift wraps after AUTH: CLOSED %q", closed)
	}

	// a write that needs authentication: the challenge, then the OK false
	wc := e.raw()
	protected := mkEvent(alice, 1, nostr.Tags{{"-"}}, "mine alone (NIP-70)")
	ok, msg := okFrame(t, wc, protected)
	if ok || !strings.HasPrefix(msg, "auth-required: ") {
		t.Fatalf("anonymous protected event: OK %v %q, want auth-required:", ok, msg)
	}
	for _, f := range wc.Frames() {
		label, _ := frame(t, f)
		if label == "AUTH" {
			break
		}
		if label == "OK" {
			t.Fatalf("the auth-required OK came before any challenge:\n%s", wc.all())
		}
	}
}

// TestAuth_ChallengeForAQuietClient: a client that connects and says
// nothing is waiting to authenticate (nostr-tools' onauth, NDK,
// welshman's attemptAuth): it gets the challenge unasked, and
// nothing else, within the relay's quiet period (500 ms), and it
// authenticates.
func TestAuth_ChallengeForAQuietClient(t *testing.T) {
	e := startEnv(t)
	alice := newUser()
	rc := e.raw()
	arr, ok := rc.waitFor("AUTH", "", 5*time.Second)
	if !ok {
		t.Fatalf("a client that said nothing got no challenge:\n%s", rc.all())
	}
	if frames := rc.Frames(); len(frames) != 1 {
		t.Fatalf("a quiet client got more than its challenge:\n%s", rc.all())
	}
	auth := mkEvent(alice, nostr.KindClientAuthentication, nostr.Tags{{"relay", e.url}, {"challenge", str(arr[1])}}, "")
	if err := rc.Publish(context.Background(), auth, "AUTH"); err != nil {
		t.Fatalf("AUTH with the unasked challenge: %v", err)
	}
}

// TestStoreDown_PublishRefusedRetryable: with PostgreSQL down, a publish
// is refused with a short error: that asks to try again and names
// nothing of the store (no host, port, user or driver words); once the
// server is back, the same event is accepted.
func TestStoreDown_PublishRefusedRetryable(t *testing.T) {
	if !overPostgres() {
		t.Skip("takes the PostgreSQL server down, which badger has no equivalent of; SNOWCLAW_TEST_STORE=postgres runs it")
	}
	srv := pgtest.NewServer(t)
	admin, err := pgx.Connect(context.Background(), srv.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(context.Background(), "CREATE DATABASE snowclaw_down"); err != nil {
		t.Fatal(err)
	}
	admin.Close(context.Background())
	dbURL := srv.URL("snowclaw_down")
	e := startEnv(t, func(o *node.Options) { o.PostgresURL = dbURL })
	alice := newUser()
	c := e.connect(nil)
	e.mustPublish(c, mkEvent(alice, 1, nil, "before the outage"))

	srv.Kill()
	evt := mkEvent(alice, 1, nil, "while the store is down")
	err = publish(c, evt)
	var refused *wsclient.Refused
	if !errors.As(err, &refused) {
		t.Fatalf("publish while PostgreSQL is down: %v, want OK false", err)
	}
	u, _ := url.Parse(dbURL)
	leaks := []string{"postgres", "connect", "user=", "dial", u.Host, u.Hostname() + ":", u.Port()}
	check := func(what, reason string) {
		t.Helper()
		if !strings.HasPrefix(reason, "error: ") || !snowclaw.Retryable(reason) {
			t.Errorf("%s while the store is down: %q, want a retryable error:", what, reason)
		}
		for _, w := range leaks {
			if strings.Contains(strings.ToLower(reason), strings.ToLower(w)) {
				t.Errorf("%s while the store is down: %q names %q of the store", what, reason, w)
			}
		}
	}
	check("OK", refused.Reason)
	// reads are refused the same way, never answered as if nothing matched
	if _, closed := fetchOnce(t, c, nostr.Filter{Authors: []string{alice.pk}}); closed == "" {
		t.Error("REQ while the store is down was answered with EOSE")
	} else {
		check("REQ", closed)
	}
	if _, closed, err := c.Count(nostr.Filter{Authors: []string{alice.pk}}, 5*time.Second); err != nil || closed == "" {
		t.Errorf("COUNT while the store is down: %q %v, want CLOSED", closed, err)
	} else {
		check("COUNT", closed)
	}

	srv.Start()
	// a client keeping the contract sends it again until it is accepted
	e.mustPublish(c, evt)
	evs, closed := fetch(t, c, nostr.Filter{IDs: []string{evt.ID}})
	if closed != "" || len(evs) != 1 {
		t.Fatalf("the event published after the restart: %d events, CLOSED %q", len(evs), closed)
	}
}
