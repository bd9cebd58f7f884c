package node_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/internal/testwait"
)

// N readers searching the same words at once while the cache is cold
// cost each remote one request: the misses share one flight. The remote
// holds every REQ on a barrier that opens only once all N searches have
// missed the cache (counted on /metrics), so without the shared flight
// each search would have sent its own REQ by then or right after.
func TestRemote_ConcurrentMissesShareOneRequest(t *testing.T) {
	const n = 8
	a := newUser()
	far := memory(a, "zeppelin/flight", `{"summary":"Zeppelin flight plans are filed a day ahead"}`)
	raw, _ := json.Marshal(far)
	release := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	var reqs atomic.Int64
	held := startScripted(t, func(string) [][]byte {
		reqs.Add(1)
		<-release
		return [][]byte{raw}
	})
	t.Cleanup(open) // after serveRemote's cleanup is registered: runs first
	e := startEnv(t, withSearch, withMetrics, withRemotes(20*time.Second, held.url, 1.0))

	type result struct {
		evs    []*nostr.Event
		closed string
	}
	results := make(chan result, n)
	for range n {
		c := e.connect(nil)
		go func() {
			evs, closed, err := c.Fetch(nostr.Filter{Search: "zeppelin flight include:remote"}, testwait.Scaled(30*time.Second))
			if err != nil {
				closed = err.Error()
			}
			results <- result{evs, closed}
		}()
	}
	testwait.For(t, fmt.Sprintf("all %d searches to reach the remote layer", n), func() bool {
		return e.scrape()[`snowclaw_remote_cache_total{result="miss"}`] >= n
	})
	open()
	for range n {
		r := <-results
		if r.closed != "" {
			t.Fatalf("search failed: %s", r.closed)
		}
		if !contains(r.evs, far.ID) {
			t.Fatalf("a search that shared the flight lacks the remote result: %v", ids(r.evs))
		}
	}
	if got := reqs.Load(); got != 1 {
		t.Fatalf("%d concurrent identical searches sent %d REQs to the remote, want 1", n, got)
	}
	if got := held.hits.Load(); got != 2 {
		t.Fatalf("the remote got %d HTTP requests, want 2 (one NIP-11, one websocket)", got)
	}
}

// The reader whose search started the shared request goes away while the
// remote is held; the request is not its own (it runs under the remote's
// timeout alone), so the reader who joined it still gets the remote's
// answer, and the remote is asked once.
func TestRemote_LeaderLeavingDoesNotFailTheFlight(t *testing.T) {
	a := newUser()
	far := memory(a, "zeppelin/mooring", `{"summary":"Zeppelin mooring masts stand 50 m tall"}`)
	raw, _ := json.Marshal(far)
	release := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	var reqs atomic.Int64
	held := startScripted(t, func(string) [][]byte {
		reqs.Add(1)
		<-release
		return [][]byte{raw}
	})
	t.Cleanup(open)
	e := startEnv(t, withSearch, withMetrics, withRemotes(20*time.Second, held.url, 1.0))
	filter := nostr.Filter{Search: "zeppelin mooring include:remote"}
	testwait.For(t, "no connections", func() bool { return e.n.Relay().Connections() == 0 })

	leader := e.connect(nil)
	if err := leader.Send("REQ", "lead", filter); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the leader's REQ at the remote", func() bool { return reqs.Load() == 1 })
	joined := make(chan []*nostr.Event, 1)
	follower := e.connect(nil)
	go func() {
		evs, _, _ := follower.Fetch(filter, testwait.Scaled(30*time.Second))
		joined <- evs
	}()
	testwait.For(t, "the follower's miss", func() bool { return e.scrape()[`snowclaw_remote_cache_total{result="miss"}`] == 2 })
	leader.Close()
	testwait.For(t, "the leader's connection closed", func() bool { return e.n.Relay().Connections() == 1 })
	open()
	if evs := <-joined; !contains(evs, far.ID) {
		t.Fatalf("the follower lost the remote answer when the leader left: %v", ids(evs))
	}
	if n := reqs.Load(); n != 1 {
		t.Fatalf("the remote was asked %d times", n)
	}
}

// Two different searches starting at once on a remote not asked before
// fetch its NIP-11 document once: the remote holds that GET until both
// have missed the cache.
func TestRemote_ColdRemoteNIP11AskedOnce(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	var nip11 atomic.Int64
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	far := serveRemote(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") == "" {
			nip11.Add(1)
			<-release
			w.Header().Set("Content-Type", "application/nostr+json")
			w.Write([]byte(`{"name":"held","supported_nips":[1,11,50]}`))
			return
		}
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		for {
			var frame []json.RawMessage
			if conn.ReadJSON(&frame) != nil {
				return
			}
			var label, sub string
			if len(frame) > 1 && json.Unmarshal(frame[0], &label) == nil && label == "REQ" && json.Unmarshal(frame[1], &sub) == nil {
				conn.WriteJSON([]any{"EOSE", sub})
			}
		}
	}))
	t.Cleanup(open)
	e := startEnv(t, withSearch, withMetrics, withRemotes(20*time.Second, far.url, 1.0))
	done := make(chan string, 2)
	for _, q := range []string{"zeppelin hangar include:remote", "airship mast include:remote"} {
		c := e.connect(nil)
		go func() {
			_, closed, err := c.Fetch(nostr.Filter{Search: q}, testwait.Scaled(30*time.Second))
			if err != nil {
				closed = err.Error()
			}
			done <- closed
		}()
	}
	testwait.For(t, "both searches' misses", func() bool { return e.scrape()[`snowclaw_remote_cache_total{result="miss"}`] == 2 })
	open()
	for range 2 {
		if closed := <-done; closed != "" {
			t.Fatalf("search failed: %s", closed)
		}
	}
	if n := nip11.Load(); n != 1 {
		t.Fatalf("the remote's NIP-11 was fetched %d times, want 1", n)
	}
}
