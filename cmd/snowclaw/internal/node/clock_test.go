package node_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/pgtest"
	"github.com/snowclaw/snowclaw/internal/testwait"
)

// One clock for the cluster: two instances over one PostgreSQL whose own
// clocks are off (one 5 minutes ahead, one 40 s behind) date and judge by
// the database's clock, so what a client sees does not depend on which
// instance it asked.

// skewedPair starts two instances of one relay over a fresh database, the
// first with its own clock off by skewA, the second by skewB.
func skewedPair(t *testing.T, skewA, skewB time.Duration) (a, b *testEnv) {
	t.Helper()
	url := pgtest.New(t) // skips where PostgreSQL is not installed
	clockA, clockB := &testClock{}, &testClock{}
	clockA.Advance(skewA)
	clockB.Advance(skewB)
	a = startEnv(t, func(o *node.Options) { o.PostgresURL, o.Clock, o.MetricsToken = url, clockA.Now, metricsToken })
	b = startEnv(t, func(o *node.Options) {
		o.PostgresURL, o.Keys, o.Owner, o.Clock, o.MetricsToken = url, a.opts.Keys, a.owner.pk, clockB.Now, metricsToken
	})
	b.owner, b.agent, b.relay = a.owner, a.agent, a.relay
	return a, b
}

// near reports whether ts is within slack of the real time.
func near(ts nostr.Timestamp, slack time.Duration) bool {
	return time.Since(ts.Time()).Abs() <= slack
}

// TestClock_GroupStateUnderSkew: metadata written by an instance 5 minutes
// ahead is dated by the database's clock, so a change made next on the
// instance 40 s behind replaces it for every client: a subscriber on
// either instance sees the current state, never a version dated ahead
// that outranks it.
func TestClock_GroupStateUnderSkew(t *testing.T) {
	a, b := skewedPair(t, 5*time.Minute, -40*time.Second)
	owner, alice := a.owner, newUser()
	oa, ob := a.connect(&owner), b.connect(&owner)
	a.mustPublish(oa, mkEvent(owner, 9007, nostr.Tags{{"h", "club"}, {"private"}, {"closed"}}, ""))
	a.mustPublish(oa, mkEvent(owner, 9000, nostr.Tags{{"h", "club"}, {"p", alice.pk}}, ""))
	for _, e := range []*testEnv{a, b} {
		e.waitMembers("club", owner.pk, alice.pk)
	}
	m := a.groupMeta(&owner, 39000, "club")
	if m == nil || !near(m.CreatedAt, 30*time.Second) {
		t.Fatalf("the 39000 written by the instance 5 min ahead is dated %v, %s from now", m.CreatedAt, time.Since(m.CreatedAt.Time()))
	}
	// the instance behind makes the group public and removes alice: what
	// clients hold (the newest created_at they saw) is that state
	b.mustPublish(ob, mkEvent(owner, 9002, nostr.Tags{{"h", "club"}, {"public"}, {"restricted"}, {"open"}}, ""))
	b.mustPublish(ob, mkEvent(owner, 9001, nostr.Tags{{"h", "club"}, {"p", alice.pk}}, ""))
	for i, e := range []*testEnv{a, b} {
		var newest *nostr.Event
		testwait.For(t, fmt.Sprintf("instance %d serving the public group without alice", i), func() bool {
			got, _ := fetch(t, e.connect(nil), nostr.Filter{Kinds: []int{39000, 39002}, Tags: nostr.TagMap{"d": {"club"}}})
			ok := len(got) == 2
			for _, evt := range got {
				switch evt.Kind {
				case 39000:
					newest = evt
					ok = ok && !hasFlag(evt, "private") && !hasFlag(evt, "closed")
				case 39002:
					ok = ok && !strings.Contains(strings.Join(pTags(evt), ","), alice.pk)
				}
			}
			return ok
		})
		if !newest.CreatedAt.Time().After(m.CreatedAt.Time()) && newest.CreatedAt != m.CreatedAt {
			t.Fatalf("instance %d: the current 39000 is dated %v, before the replaced %v: clients keep the old one", i, newest.CreatedAt, m.CreatedAt)
		}
		if !near(newest.CreatedAt, 30*time.Second) {
			t.Fatalf("instance %d: the current 39000 is dated %s from now", i, time.Since(newest.CreatedAt.Time()))
		}
	}
}

// nip98At is an Authorization header for GET path on e, signed by u and
// dated at.
func nip98At(e *testEnv, u user, path string, at time.Time) (string, string) {
	full := "http" + strings.TrimPrefix(e.url, "ws") + path
	auth := nostr.Event{Kind: 27235, CreatedAt: nostr.Timestamp(at.Unix()), Tags: nostr.Tags{{"u", full}, {"method", "GET"}, nonceTag()}}
	auth.Sign(u.sk)
	raw, _ := json.Marshal(auth)
	return full, "Nostr " + base64.StdEncoding.EncodeToString(raw)
}

func getWith(t *testing.T, url, authz string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", authz)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestClock_NIP98WindowIsTheStores: an instance 40 s behind judges a
// header's age by the database's clock, which also expires the shared
// record of used headers (so a header used elsewhere cannot be replayed
// here once that record is gone): a header past the window is refused,
// though by the instance's own clock it is still fresh.
func TestClock_NIP98WindowIsTheStores(t *testing.T) {
	_, b := skewedPair(t, 0, -40*time.Second)
	owner := b.owner
	// 20 s old: within the window by either clock
	if url, authz := nip98At(b, owner, "/api/v1/status", time.Now().Add(-20*time.Second)); getWith(t, url, authz) != 200 {
		t.Fatal("a header 20 s old refused")
	}
	// 75 s old by the database's clock, 35 s old by B's: past the 60 s
	// window, whose shared used-once record expires by the database's
	// clock too
	if url, authz := nip98At(b, owner, "/api/v1/status", time.Now().Add(-75*time.Second)); getWith(t, url, authz) == 200 {
		t.Fatal("the instance 40 s behind accepted a header past the window by the store's clock")
	}
}

// TestClock_HealthOkWhenAhead: a caught-up instance 5 minutes ahead of the
// database is healthy while the other instance writes, and reports its
// offset.
func TestClock_HealthOkWhenAhead(t *testing.T) {
	a, b := skewedPair(t, 5*time.Minute, 0)
	ob := b.connect(&b.owner)
	for i := range 10 {
		b.mustPublish(ob, mkEvent(b.owner, 1, nil, fmt.Sprintf("note %d", i)))
		code, h := a.api(nil, "GET", "/api/v1/health", nil)
		if code != 200 || h["status"] != "ok" {
			t.Fatalf("poll %d: health of the instance ahead: %d %v", i, code, h)
		}
		clk, _ := h["clock"].(map[string]any)
		if off, _ := clk["offset_seconds"].(float64); off > -290 || off < -310 {
			t.Fatalf("poll %d: the instance 5 min ahead reports an offset of %v s", i, clk["offset_seconds"])
		}
	}
	series := a.scrape()
	if off := series["snowclaw_clock_offset_seconds"]; off > -290 || off < -310 {
		t.Fatalf("snowclaw_clock_offset_seconds = %v on the instance 5 min ahead", off)
	}
}

// TestClock_ExpiryByTheStoresTime: an instance an hour ahead does not take
// an event for expired that expires in 30 minutes by the database's
// clock: it serves it, and does not delete it for everyone.
func TestClock_ExpiryByTheStoresTime(t *testing.T) {
	a, b := skewedPair(t, time.Hour, 0)
	ob := b.connect(&b.owner)
	exp := fmt.Sprint(time.Now().Add(30 * time.Minute).Unix())
	evt := b.mustPublish(ob, mkEvent(b.owner, 1, nostr.Tags{{"expiration", exp}}, "for half an hour"))
	for i, e := range []*testEnv{a, b} {
		testwait.For(t, fmt.Sprintf("instance %d serving the event that expires in 30 minutes", i), func() bool {
			got, _ := fetch(t, e.connect(nil), nostr.Filter{IDs: []string{evt.ID}})
			return len(got) == 1
		})
	}
	a.n.Relay().SweepExpired(context.Background())
	if got, _ := fetch(t, b.connect(nil), nostr.Filter{IDs: []string{evt.ID}}); len(got) != 1 {
		t.Fatal("the instance an hour ahead deleted an event that has not expired")
	}
}
