package node_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/testwait"
)

func TestNIP09_DeletedStaysDeleted(t *testing.T) {
	e := startEnv(t)
	alice, bob := newUser(), newUser()
	c := e.connect(nil)
	note := e.mustPublish(c, mkEvent(alice, 1, nil, "regret"))
	e.refusedWith(c, mkEvent(bob, 5, nostr.Tags{{"e", note.ID}}, ""), "blocked:")
	e.mustPublish(c, mkEvent(alice, 5, nostr.Tags{{"e", note.ID}}, "oops"))
	if got, _ := fetch(t, c, nostr.Filter{IDs: []string{note.ID}}); len(got) != 0 {
		t.Fatal("deleted note still served")
	}
	e.refusedWith(c, note, "blocked:")
	e.restart()
	c = e.connect(nil)
	e.refusedWith(c, note, "blocked:")

	// an address deletion covers versions up to its created_at; a newer
	// version may recreate the address
	v1 := mkEvent(alice, 30078, nostr.Tags{{"d", "snow:memory:fact/x"}}, "v1")
	v1.CreatedAt -= 10
	v1.Sign(alice.sk)
	e.mustPublish(c, v1)
	addr := "30078:" + alice.pk + ":snow:memory:fact/x"
	del := mkEvent(alice, 5, nostr.Tags{{"a", addr}}, "")
	del.CreatedAt -= 5
	del.Sign(alice.sk)
	e.mustPublish(c, del)
	if got, _ := fetch(t, c, nostr.Filter{Tags: nostr.TagMap{"d": {"snow:memory:fact/x"}}}); len(got) != 0 {
		t.Fatal("deleted address still served")
	}
	e.refusedWith(c, v1, "blocked:")
	e.mustPublish(c, mkEvent(alice, 30078, nostr.Tags{{"d", "snow:memory:fact/x"}}, "v2 after deletion"))
}

// TestNIP09_ForgedTagCannotBlockOthers: khatru's deletion check looked
// for a literal "#e" tag; a stranger's kind 5 carrying one must not block
// someone else's event.
func TestNIP09_ForgedTagCannotBlockOthers(t *testing.T) {
	e := startEnv(t)
	alice, mallory := newUser(), newUser()
	c := e.connect(nil)
	victim := mkEvent(alice, 1, nil, "my note")
	e.mustPublish(c, mkEvent(mallory, 5, nostr.Tags{{"#e", victim.ID}}, ""))
	e.mustPublish(c, victim)
}

func TestReplaceable_OlderVersionNeitherStoredNorBroadcast(t *testing.T) {
	e := startEnv(t)
	var saved atomic.Int32
	e.r.OnEventSaved = append(e.r.OnEventSaved, func(_ context.Context, evt *snowclaw.Event) {
		if evt.Kind == 30078 {
			saved.Add(1)
		}
	})
	alice := newUser()
	c := e.connect(nil)
	watcher := e.raw()
	watcher.send("REQ", "w", nostr.Filter{Kinds: []int{30078}, Authors: []string{alice.pk}})
	watcher.waitFor("EOSE", "w", 2*time.Second)

	newer := mkEvent(alice, 30078, nostr.Tags{{"d", "snow:memory:pref"}}, "new")
	e.mustPublish(c, newer)
	older := mkEvent(alice, 30078, nostr.Tags{{"d", "snow:memory:pref"}}, "old")
	older.CreatedAt = newer.CreatedAt - 60
	older.Sign(alice.sk)
	e.refusedWith(c, older, "duplicate:")

	got, _ := fetch(t, c, nostr.Filter{Kinds: []int{30078}, Authors: []string{alice.pk}})
	if len(got) != 1 || got[0].ID != newer.ID {
		t.Fatalf("stored versions %v, want only the newer", ids(got))
	}
	// a later event of alice's is the barrier: it is broadcast after the
	// refused older version would have been
	waitEvent(t, watcher.Client, "w", e.mustPublish(c, mkEvent(alice, 30078, nostr.Tags{{"d", "snow:memory:barrier"}}, "later")).ID)
	if seen := watcher.eventIDs("w"); seen[older.ID] || !seen[newer.ID] {
		t.Fatalf("broadcast %v: want the newer only", seen)
	}
	if n := saved.Load(); n != 2 {
		t.Fatalf("OnEventSaved ran %d times, want 2: the newer and the barrier (older version passed to plugins)", n)
	}
	// a newer one replaces
	newest := mkEvent(alice, 30078, nostr.Tags{{"d", "snow:memory:pref"}}, "newest")
	newest.CreatedAt = newer.CreatedAt + 1
	newest.Sign(alice.sk)
	e.mustPublish(c, newest)
	got, _ = fetch(t, c, nostr.Filter{Kinds: []int{30078}, Authors: []string{alice.pk}, Tags: nostr.TagMap{"d": {"snow:memory:pref"}}})
	if len(got) != 1 || got[0].ID != newest.ID {
		t.Fatalf("after replacement %v, want newest", ids(got))
	}
}

func TestNIP40_ExpiredEventsNotServed(t *testing.T) {
	clock := &testClock{}
	e := startEnv(t, func(o *node.Options) { o.Clock = clock.Now })
	alice := newUser()
	c := e.connect(nil)
	exp := strconv.FormatInt(int64(nostr.Now())+10, 10)
	evt := e.mustPublish(c, mkEvent(alice, 1, nostr.Tags{{"expiration", exp}}, "soon gone"))
	if got, _ := fetch(t, c, nostr.Filter{IDs: []string{evt.ID}}); len(got) != 1 {
		t.Fatal("not served before expiry")
	}
	if n, _ := count(t, c, nostr.Filter{IDs: []string{evt.ID}}); n != 1 {
		t.Fatalf("counted %d before expiry, want 1", n)
	}
	// the relay's clock past the expiration: however slow the machine,
	// the event was read before it and is hidden right after
	clock.Advance(11 * time.Second)
	if got, _ := fetch(t, c, nostr.Filter{IDs: []string{evt.ID}}); len(got) != 0 {
		t.Fatal("served after its expiration")
	}
	if n, _ := count(t, c, nostr.Filter{IDs: []string{evt.ID}}); n != 0 {
		t.Fatalf("expired event counted: %d", n)
	}
	// and a new event already expired by the relay's clock is refused
	e.refusedWith(c, mkEvent(alice, 1, nostr.Tags{{"expiration", exp}}, "born expired"), "invalid:")
}

func TestNIP45_Count(t *testing.T) {
	e := startEnv(t)
	alice := newUser()
	c := e.connect(nil)
	for i := 0; i < 7; i++ {
		e.mustPublish(c, mkEvent(alice, 1, nil, "n"+strconv.Itoa(i)))
	}
	if n, closed := count(t, c, nostr.Filter{Kinds: []int{1}, Authors: []string{alice.pk}}); n != 7 {
		t.Fatalf("COUNT = %d (CLOSED %q); want 7", n, closed)
	}
}

// TestNIP42_ServiceURL: behind a TLS proxy the relay must check the auth
// event's relay tag against its public URL, not the address it sees.
func TestNIP42_ServiceURL(t *testing.T) {
	e := startEnv(t, func(o *node.Options) { o.ServiceURL = "wss://relay.example.com" })
	alice := newUser()
	for _, tc := range []struct {
		url  string
		want bool
	}{
		{"wss://relay.example.com", true},
		{"ws://relay.example.com", false},
		{"wss://evil.example", false},
		// a local tool may name the loopback address it dialled: only a
		// client on this machine can be made to sign it
		{e.url, true},
	} {
		rc := e.raw()
		challenge, err := rc.Challenge(alice.sk, testwait.Scaled(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		evt := mkEvent(alice, 22242, nostr.Tags{{"relay", tc.url}, {"challenge", challenge}}, "")
		rc.send("AUTH", evt)
		ok, found := rc.waitFor("OK", evt.ID, 2*time.Second)
		if !found || (string(ok[2]) == "true") != tc.want {
			t.Fatalf("auth with relay tag %s: %v, want accepted=%v", tc.url, rc.all(), tc.want)
		}
	}
}

func TestHTTP_HomeAndHealth(t *testing.T) {
	e := startEnv(t)
	for path, want := range map[string]string{"/": "Nostr relay", "/healthz": `"ok"`} {
		resp, err := http.Get(e.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		buf := make([]byte, 4096)
		n, _ := resp.Body.Read(buf)
		b.Write(buf[:n])
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(b.String(), want) {
			t.Fatalf("GET %s: %d %q", path, resp.StatusCode, b.String())
		}
	}
}
