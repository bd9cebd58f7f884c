package node_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	badgerstore "github.com/fiatjaf/eventstore/badger"
	"github.com/fiatjaf/khatru"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/relay"
)

// benchPublishers is the number of concurrent client connections; each
// publishes its share of b.N events one after the other, waiting for OK.
const benchPublishers = 4

const benchGroup = "bench"

// BenchmarkPublish measures EVENT → OK throughput over websocket for a bare
// khatru relay with only a badger store and for the Snowclaw relay (all
// hooks, rate limits disabled), on the same pre-signed events.
//
//	plain: kind 1 notes only
//	group: half kind 1, half kind 9 chat with ["h", group] into a group the
//	       publishers have joined (on Snowclaw: created by the owner with
//	       9007, joined with 9021; the bare relay just stores the same events)
func BenchmarkPublish(b *testing.B) {
	servers := []struct {
		name  string
		start func(b *testing.B, owner string) (url string, stop func())
	}{
		{"bare", benchStartBare},
		{"snowclaw", benchStartSnowclaw},
	}
	for _, srv := range servers {
		b.Run(srv.name, func(b *testing.B) {
			for _, mix := range []string{"plain", "group"} {
				b.Run(mix, func(b *testing.B) {
					benchPublish(b, srv.start, mix == "group")
				})
			}
		})
	}
}

func benchPublish(b *testing.B, start func(*testing.B, string) (string, func()), group bool) {
	ctx := context.Background()
	ownerSK := nostr.GeneratePrivateKey()
	ownerPK, _ := nostr.GetPublicKey(ownerSK)
	url, stop := start(b, ownerPK)
	defer stop()

	sks := make([]string, benchPublishers)
	conns := make([]*nostr.Relay, benchPublishers)
	for i := range conns {
		sks[i] = nostr.GeneratePrivateKey()
		c, err := nostr.RelayConnect(ctx, url)
		if err != nil {
			b.Fatalf("connecting publisher %d: %v", i, err)
		}
		defer c.Close()
		conns[i] = c
	}

	if group {
		owner, err := nostr.RelayConnect(ctx, url)
		if err != nil {
			b.Fatalf("connecting owner: %v", err)
		}
		benchMustPublish(b, owner, benchSigned(b, ownerSK, snowclaw.KindCreateGroup, nostr.Tags{{"h", benchGroup}}, ""))
		owner.Close()
		for i, c := range conns {
			benchMustPublish(b, c, benchSigned(b, sks[i], snowclaw.KindJoinRequest, nostr.Tags{{"h", benchGroup}}, ""))
		}
	}

	// pre-sign every event outside the timer; publisher p sends
	// events[p], events[p+P], events[p+2P], …
	events := make([]nostr.Event, b.N)
	for i := range events {
		p := i % benchPublishers
		content := fmt.Sprintf("benchmark event %d of %d", i, b.N)
		if group && i%2 == 1 {
			events[i] = benchSigned(b, sks[p], snowclaw.KindChat, nostr.Tags{{"h", benchGroup}}, content)
		} else {
			events[i] = benchSigned(b, sks[p], 1, nil, content)
		}
	}

	var wg sync.WaitGroup
	errs := make(chan error, benchPublishers)
	b.ResetTimer()
	began := time.Now()
	cpuBegan, haveCPU := benchCPUTime()
	for p, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := p; i < len(events); i += benchPublishers {
				if err := c.Publish(ctx, events[i]); err != nil {
					errs <- fmt.Errorf("publisher %d, event %d (kind %d): %w", p, i, events[i].Kind, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)
	cpuEnded, _ := benchCPUTime()
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err) // a refusal or timeout: the number would be meaningless
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	if haveCPU {
		// process CPU (relay and clients) per event: unlike events/s it
		// barely moves when other processes compete for the machine
		b.ReportMetric(float64((cpuEnded-cpuBegan).Microseconds())/float64(b.N), "cpu-µs/event")
	}
}

// benchCPUTime is the user+system CPU time of this process so far, from
// /proc/self/stat (10ms ticks); false where there is no /proc.
func benchCPUTime() (time.Duration, bool) {
	raw, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, false
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state); utime, stime are fields 14, 15
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * (time.Second / 100), true
}

func benchSigned(b *testing.B, sk string, kind int, tags nostr.Tags, content string) nostr.Event {
	evt := nostr.Event{Kind: kind, Tags: tags, Content: content, CreatedAt: nostr.Now()}
	if err := evt.Sign(sk); err != nil {
		b.Fatalf("signing: %v", err)
	}
	return evt
}

func benchMustPublish(b *testing.B, c *nostr.Relay, evt nostr.Event) {
	if err := c.Publish(context.Background(), evt); err != nil {
		b.Fatalf("setup event kind %d refused: %v", evt.Kind, err)
	}
}

// benchStartSnowclaw runs node.New with the defaults of cmd/snowclaw's
// relayOptions, except that every rate limit is disabled.
func benchStartSnowclaw(b *testing.B, owner string) (string, func()) {
	r, err := node.New(context.Background(), node.Options{Options: relay.Options{
		DataDir:         b.TempDir(),
		Name:            "snowclaw",
		Description:     "Nostr relay with NIP-29 groups and an agent memory",
		Version:         "bench",
		Owner:           owner,
		Keys:            relay.Keys{RelaySecret: nostr.GeneratePrivateKey(), AgentSecret: nostr.GeneratePrivateKey()},
		Limits:          policies.DefaultLimits(),
		MaxMessageBytes: 256 * 1024,
		EventRateIP:     policies.Rate{},
		EventRatePubkey: policies.Rate{},
		FilterRateIP:    policies.Rate{},
		ConnRateIP:      policies.Rate{},
	},
		GroupDefaults:    policies.GroupInfo{Private: true, Restricted: true},
		MaxGroupEventAge: time.Hour,
	})
	if err != nil {
		b.Fatalf("node.New: %v", err)
	}
	ts := httptest.NewServer(r.Handler())
	return benchWSURL(ts), func() {
		ts.CloseClientConnections()
		ts.Close()
		r.Close()
	}
}

// benchStartBare runs khatru with nothing but a badger store (its logger
// silenced, as ours is).
func benchStartBare(b *testing.B, _ string) (string, func()) {
	db := &badgerstore.BadgerBackend{
		Path:                  filepath.Join(b.TempDir(), "events"),
		BadgerOptionsModifier: func(o badger.Options) badger.Options { return o.WithLogger(nil) },
	}
	if err := db.Init(); err != nil {
		b.Fatalf("badger: %v", err)
	}
	k := khatru.NewRelay()
	k.Log = log.New(io.Discard, "", 0)
	k.StoreEvent = append(k.StoreEvent, db.SaveEvent)
	k.QueryEvents = append(k.QueryEvents, db.QueryEvents)
	k.DeleteEvent = append(k.DeleteEvent, db.DeleteEvent)
	k.ReplaceEvent = append(k.ReplaceEvent, db.ReplaceEvent)
	k.CountEvents = append(k.CountEvents, db.CountEvents)
	ts := httptest.NewServer(http.Handler(k))
	return benchWSURL(ts), func() {
		ts.CloseClientConnections()
		ts.Close()
		db.Close()
	}
}

func benchWSURL(ts *httptest.Server) string { return "ws" + strings.TrimPrefix(ts.URL, "http") }
