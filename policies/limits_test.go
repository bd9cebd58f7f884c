package policies

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// small are limits tight enough to reach in a table row.
var small = Limits{
	MaxEventBytes:    1000,
	MaxContentBytes:  500,
	MaxTags:          5,
	MaxTagValueBytes: 100,
	MaxFutureSeconds: 60,
	MaxFilterValues:  4,
	MaxLimit:         50,
	DefaultLimit:     20,
}

// TestLimits_RejectEvent: the edges of every event limit, on a clock
// synctest holds still so "now" is the same for the row and the rule.
func TestLimits_RejectEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		now := nostr.Now()
		tags := func(n int, value string) nostr.Tags {
			out := make(nostr.Tags, n)
			for i := range out {
				out[i] = nostr.Tag{"t", value}
			}
			return out
		}
		expiring := func(at nostr.Timestamp) nostr.Tags {
			return nostr.Tags{{"expiration", strconv.FormatInt(int64(at), 10)}}
		}
		for _, row := range []struct {
			name    string
			limits  Limits
			evt     nostr.Event
			refused bool
		}{
			{"empty event", small, nostr.Event{CreatedAt: now}, false},
			{"content at the limit", small, nostr.Event{CreatedAt: now, Content: strings.Repeat("a", 500)}, false},
			{"content one byte over", small, nostr.Event{CreatedAt: now, Content: strings.Repeat("a", 501)}, true},
			{"content counted in bytes, not runes", small, nostr.Event{CreatedAt: now, Content: strings.Repeat("é", 251)}, true},
			{"tags at the limit", small, nostr.Event{CreatedAt: now, Tags: tags(5, "x")}, false},
			{"one tag over", small, nostr.Event{CreatedAt: now, Tags: tags(6, "x")}, true},
			{"tag value at the limit", small, nostr.Event{CreatedAt: now, Tags: tags(1, strings.Repeat("v", 100))}, false},
			{"tag value one byte over", small, nostr.Event{CreatedAt: now, Tags: tags(1, strings.Repeat("v", 101))}, true},
			{"tag name over the value limit", small, nostr.Event{CreatedAt: now, Tags: nostr.Tags{{strings.Repeat("k", 101), "v"}}}, true},
			// 200 of envelope + content + each value and 3 of quoting
			{"whole event at the limit", small, nostr.Event{CreatedAt: now, Content: strings.Repeat("a", 392), Tags: tags(4, strings.Repeat("v", 95))}, false},
			{"whole event one byte over", small, nostr.Event{CreatedAt: now, Content: strings.Repeat("a", 393), Tags: tags(4, strings.Repeat("v", 95))}, true},
			{"whole event over with every part within", small, nostr.Event{CreatedAt: now, Content: strings.Repeat("a", 450), Tags: tags(5, strings.Repeat("v", 90))}, true},
			{"created_at at the future bound", small, nostr.Event{CreatedAt: now + 60}, false},
			{"created_at one second past it", small, nostr.Event{CreatedAt: now + 61}, true},
			{"created_at long ago", small, nostr.Event{CreatedAt: 1}, false},
			{"expiring later", small, nostr.Event{CreatedAt: now, Tags: expiring(now + 1)}, false},
			{"expiring now", small, nostr.Event{CreatedAt: now, Tags: expiring(now)}, true},
			{"expired", small, nostr.Event{CreatedAt: now, Tags: expiring(now - 1)}, true},
			{"unreadable expiration is no expiration", small, nostr.Event{CreatedAt: now, Tags: nostr.Tags{{"expiration", "soon"}}}, false},
			{"zero limits bound nothing", Limits{}, nostr.Event{CreatedAt: now + 100000, Content: strings.Repeat("a", 1<<20), Tags: tags(5000, strings.Repeat("v", 5000))}, false},
			{"zero limits still refuse the expired", Limits{}, nostr.Event{CreatedAt: now, Tags: expiring(now - 1)}, true},
			{"defaults take a large note", DefaultLimits(), nostr.Event{CreatedAt: now, Content: strings.Repeat("a", 64*1024)}, false},
			{"defaults refuse a larger one", DefaultLimits(), nostr.Event{CreatedAt: now, Content: strings.Repeat("a", 64*1024+1)}, true},
			{"defaults: fifteen minutes ahead", DefaultLimits(), nostr.Event{CreatedAt: now + 900}, false},
			{"defaults: a second more", DefaultLimits(), nostr.Event{CreatedAt: now + 901}, true},
		} {
			err := row.limits.RejectEvent(context.Background(), snowclaw.ReadEvent(&row.evt))
			if (err != nil) != row.refused {
				t.Errorf("%s: %v, want refused %v", row.name, err, row.refused)
			}
			if err != nil && snowclaw.ReasonOf(err) != snowclaw.ReasonInvalid {
				t.Errorf("%s: %v, want invalid:", row.name, err)
			}
		}
	})
}

// TestLimits_RejectFilter: what makes a filter too big or malformed.
func TestLimits_RejectFilter(t *testing.T) {
	id := strings.Repeat("a", 64)
	for _, row := range []struct {
		name    string
		limits  Limits
		filter  nostr.Filter
		refused bool
	}{
		{"empty filter", small, nostr.Filter{}, false},
		{"values at the limit", small, nostr.Filter{IDs: []string{id}, Authors: []string{id}, Kinds: []int{1}, Tags: nostr.TagMap{"e": {"x"}}}, false},
		{"one value over, counted across fields", small, nostr.Filter{IDs: []string{id}, Authors: []string{id}, Kinds: []int{1}, Tags: nostr.TagMap{"e": {"x"}, "p": {"y"}}}, true},
		{"no value limit", Limits{}, nostr.Filter{Kinds: make([]int, 10000)}, false},
		{"a tag name of two letters", small, nostr.Filter{Tags: nostr.TagMap{"hh": {"x"}}}, true},
		{"an empty tag name", small, nostr.Filter{Tags: nostr.TagMap{"": {"x"}}}, true},
		{"an empty tag value list", small, nostr.Filter{Tags: nostr.TagMap{"h": {}}}, false},
		{"a short id (prefix search is gone)", small, nostr.Filter{IDs: []string{"abcd"}}, true},
		{"a long id", small, nostr.Filter{IDs: []string{id + "a"}}, true},
		{"a short author", small, nostr.Filter{Authors: []string{"abcd"}}, true},
		{"an npub as author", small, nostr.Filter{Authors: []string{"npub1" + strings.Repeat("q", 58)}}, true},
		{"limit zero", small, nostr.Filter{LimitZero: true}, false},
		{"negative limit", small, nostr.Filter{Limit: -1}, true},
		{"a huge limit (clamped, not refused)", small, nostr.Filter{Limit: 1 << 30}, false},
	} {
		err := row.limits.RejectFilter(context.Background(), snowclaw.Filter{Filter: row.filter})
		if (err != nil) != row.refused {
			t.Errorf("%s: %v, want refused %v", row.name, err, row.refused)
		}
		if err != nil && snowclaw.ReasonOf(err) != snowclaw.ReasonInvalid {
			t.Errorf("%s: %v, want invalid:", row.name, err)
		}
	}
}

// TestLimits_ClampLimit: the limit a query really runs with.
func TestLimits_ClampLimit(t *testing.T) {
	for _, row := range []struct {
		limits Limits
		asked  int
		want   int
	}{
		{small, 0, 20},
		{small, -5, 20},
		{small, 1, 1},
		{small, 49, 49},
		{small, 50, 50},
		{small, 51, 50},
		{small, 1 << 30, 50},
		{Limits{DefaultLimit: 7}, 1 << 20, 1 << 20}, // no maximum
		{Limits{}, 0, 0},
		{DefaultLimits(), 0, 100},
		{DefaultLimits(), 10000, 500},
	} {
		if got := row.limits.ClampLimit(nostr.Filter{Limit: row.asked}); got != row.want {
			t.Errorf("ClampLimit(%d) with max %d, default %d = %d, want %d", row.asked, row.limits.MaxLimit, row.limits.DefaultLimit, got, row.want)
		}
	}
}

func fromIP(ip string) context.Context {
	return WithConn(context.Background(), &Conn{IP: ip})
}

// TestEventRateLimit: per address and per key token buckets, refilled by
// synctest's clock (time.Sleep in a bubble only moves the fake clock).
func TestEventRateLimit(t *testing.T) {
	type send struct {
		after   time.Duration // sleep before sending
		ip, key string
		limited bool
	}
	a, b := strings.Repeat("a", 64), strings.Repeat("b", 64)
	exempt := strings.Repeat("e", 64)
	perIP := Rate{PerSecond: 1, Burst: 2}
	perKey := Rate{PerSecond: 1, Burst: 3}
	for _, row := range []struct {
		name  string
		sends []send
	}{
		{"a burst, then refused", []send{{0, "1.1.1.1", a, false}, {0, "1.1.1.1", a, false}, {0, "1.1.1.1", a, true}}},
		{"a refusal spends nothing", []send{{0, "1.1.1.1", a, false}, {0, "1.1.1.1", a, false}, {0, "1.1.1.1", a, true}, {time.Second, "1.1.1.1", a, false}, {0, "1.1.1.1", a, true}}},
		{"a second refills one token", []send{{0, "1.1.1.1", a, false}, {0, "1.1.1.1", a, false}, {999 * time.Millisecond, "1.1.1.1", a, true}, {time.Millisecond, "1.1.1.1", a, false}}},
		{"refill stops at the burst", []send{{0, "1.1.1.1", a, false}, {30 * time.Second, "1.1.1.1", a, false}, {0, "1.1.1.1", a, false}, {0, "1.1.1.1", a, true}}},
		{"addresses have their own buckets", []send{{0, "1.1.1.1", a, false}, {0, "1.1.1.1", b, false}, {0, "2.2.2.2", a, false}}},
		{"a key is limited across addresses", []send{{0, "1.1.1.1", a, false}, {0, "2.2.2.2", a, false}, {0, "3.3.3.3", a, false}, {0, "4.4.4.4", a, true}}},
		{"the relay's own events are never limited", []send{{0, "", a, false}, {0, "", a, false}, {0, "", a, false}, {0, "", a, false}}},
		{"exempt keys are never limited", []send{{0, "1.1.1.1", exempt, false}, {0, "1.1.1.1", exempt, false}, {0, "1.1.1.1", exempt, false}, {0, "1.1.1.1", a, false}}},
	} {
		t.Run(row.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				limit := EventRateLimit(perIP, perKey, func(pk string) bool { return pk == exempt })
				for i, s := range row.sends {
					time.Sleep(s.after)
					err := limit(fromIP(s.ip), snowclaw.ReadEvent(&nostr.Event{PubKey: s.key}))
					if (err != nil) != s.limited {
						t.Fatalf("send %d: %v, want limited %v", i, err, s.limited)
					}
					if err != nil && snowclaw.ReasonOf(err) != snowclaw.ReasonRateLimited {
						t.Fatalf("send %d: %v, want rate-limited:", i, err)
					}
				}
			})
		})
	}
}

// TestFilterAndConnectionRateLimit: the per-address limits of queries and
// connections, and a zero rate that limits nothing.
func TestFilterAndConnectionRateLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		filters := FilterRateLimit(Rate{PerSecond: 2, Burst: 1})
		conns := ConnectionRateLimit(Rate{PerSecond: 0.5, Burst: 1})
		off := ConnectionRateLimit(Rate{})
		check := func(what string, limited, want bool) {
			t.Helper()
			if limited != want {
				t.Errorf("%s: limited %v, want %v", what, limited, want)
			}
		}
		check("first query", filters(fromIP("1.1.1.1"), snowclaw.Filter{}) != nil, false)
		check("second query at once", filters(fromIP("1.1.1.1"), snowclaw.Filter{}) != nil, true)
		check("query from another address", filters(fromIP("2.2.2.2"), snowclaw.Filter{}) != nil, false)
		check("internal query", filters(context.Background(), snowclaw.Filter{}) != nil, false)
		time.Sleep(500 * time.Millisecond)
		check("query half a second later", filters(fromIP("1.1.1.1"), snowclaw.Filter{}) != nil, false)

		check("first connection", conns("1.1.1.1"), false)
		check("second connection at once", conns("1.1.1.1"), true)
		time.Sleep(time.Second)
		check("a second later (half a token)", conns("1.1.1.1"), true)
		time.Sleep(time.Second)
		check("two seconds later", conns("1.1.1.1"), false)
		for i := range 100 {
			check("no limit configured, connection "+strconv.Itoa(i), off("1.1.1.1"), false)
		}
	})
}

// TestRateLimit_SweepDropsFullBuckets: a stream of one-off keys does not
// grow the limiter forever. A bucket refilled to its burst is dropped by
// the next sweep (it equals a new one); a key still short of tokens keeps
// its bucket, so waiting out the sweep buys it nothing.
func TestRateLimit_SweepDropsFullBuckets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLimiter(Rate{PerSecond: 0.01, Burst: 2}) // 200 s to refill
		for i := range 100 {
			l.allow(strconv.Itoa(i), time.Now())
		}
		l.allow("busy", time.Now())
		l.allow("busy", time.Now())
		time.Sleep(150 * time.Second) // the one-off keys are full again, "busy" is not
		if !l.allow("other", time.Now()) {
			t.Fatal("a new key was refused")
		}
		if n := len(l.buckets); n != 2 {
			t.Fatalf("%d buckets after the sweep, want busy and other", n)
		}
		// 1.5 tokens refilled: one send, not the two of a fresh bucket
		if !l.allow("busy", time.Now()) || l.allow("busy", time.Now()) {
			t.Fatal("the sweep changed a drained key's bucket")
		}
	})
}
