package node_test

import (
	"encoding/json"
	"fmt"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
)

// loadBarrier holds the search index's load open: the index's own open
// (search.OpenContext, reading the index from disk) reports its progress
// to it, and the first report waits until release. Everything around it
// is the real load.
type loadBarrier struct {
	once, releaseOnce sync.Once
	entered           chan struct{}
	released          chan struct{}
}

func (b *loadBarrier) release() { b.releaseOnce.Do(func() { close(b.released) }) }

func newLoadBarrier() *loadBarrier {
	return &loadBarrier{entered: make(chan struct{}), released: make(chan struct{})}
}

func (b *loadBarrier) progress(done, total int64) {
	b.once.Do(func() {
		close(b.entered)
		<-b.released
	})
}

// getJSON GETs path on the relay's HTTP side: the status and the body.
func (e *testEnv) getJSON(path string) (int, map[string]any) {
	e.t.Helper()
	resp, err := http.Get(e.srv.URL + path)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := map[string]any{}
	if err := json.Unmarshal(raw, &out); err != nil {
		e.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, raw)
	}
	return resp.StatusCode, out
}

// TestSearchLoading_RelayServesWhileTheIndexLoads restarts a relay on a
// built index and holds the index's load open: meanwhile the relay
// answers NIP-11, a REQ (to EOSE), a COUNT and an EVENT at once, refuses
// a search with a reason that says to retry, and reports itself starting
// (health) and not ready (/readyz). Once the load goes on, it is ready,
// and the event written during the load is found, once.
func TestSearchLoading_RelayServesWhileTheIndexLoads(t *testing.T) {
	barrier := newLoadBarrier()
	e := startEnv(t, withSearch)
	t.Cleanup(barrier.release) // before the relay stops (cleanups run last first): a failed check must not hang Close
	a := newUser()
	c := e.connect(nil)
	const stored = 300
	for i := range stored {
		e.mustPublish(c, memory(a, fmt.Sprintf("ops/host%d", i), fmt.Sprintf(`{"summary":"host %d runs the nightly backup job"}`, i)))
	}
	before := e.n.Search().Count()
	if before != stored {
		t.Fatalf("%d docs indexed, want %d", before, stored)
	}

	e.stop()
	e.loading = true
	e.opts.Search.Search.Progress = barrier.progress
	e.start()
	select {
	case <-barrier.entered:
	case <-time.After(testwait.Scaled(30 * time.Second)):
		t.Fatal("the index's load never began")
	}
	if e.n.Search().Ready() {
		t.Fatal("the index is ready while its load is held open")
	}
	began := time.Now()

	doc, resp := e.nip11("application/nostr+json")
	if resp.StatusCode != 200 || doc["name"] == nil {
		t.Fatalf("NIP-11 while loading: %d %v", resp.StatusCode, doc)
	}
	c = e.connect(nil)
	evs, closed := fetchOnce(t, c, nostr.Filter{Kinds: []int{30078}, Authors: []string{a.pk}, Limit: 5})
	if closed != "" || len(evs) != 5 {
		t.Fatalf("REQ while loading: %d events, CLOSED %q; want 5 and EOSE", len(evs), closed)
	}
	n, reason, err := c.Count(nostr.Filter{Kinds: []int{30078}, Authors: []string{a.pk}}, testwait.Scaled(5*time.Second))
	if err != nil || reason != "" || n != stored {
		t.Fatalf("COUNT while loading: %d %q %v, want %d", n, reason, err, stored)
	}
	fresh := e.mustPublish(c, memory(a, "ops/lighthouse", `{"summary":"the lighthouse keeper rotates the quokka credentials"}`))
	_, closed = fetchOnce(t, c, nostr.Filter{Search: "quokka"})
	if !strings.HasPrefix(closed, "error: search index is loading (") || !strings.HasSuffix(closed, "try again shortly") {
		t.Fatalf("search while loading: CLOSED %q, want the retryable loading refusal", closed)
	}
	if _, reason, err := c.Count(nostr.Filter{Search: "quokka"}, testwait.Scaled(5*time.Second)); err != nil || !strings.HasPrefix(reason, "error: search index is loading (") {
		t.Fatalf("COUNT with a search while loading: %q %v, want the loading refusal", reason, err)
	}
	if code, msg := e.v1(&e.owner, "GET", "/api/v1/search?q=quokka", nil, nil); code < 500 || !strings.HasPrefix(msg, "error: search index is loading (") {
		t.Fatalf("GET /api/v1/search while loading: %d %q, want the loading refusal", code, msg)
	}
	code, h := e.getJSON("/api/v1/health")
	if code != 200 || h["status"] != "starting" || h["search_loading"] == nil {
		t.Fatalf("health while loading: %d %v, want status starting with the load's progress", code, h)
	}
	code, r := e.getJSON("/readyz")
	if code != http.StatusServiceUnavailable || r["status"] != "starting" {
		t.Fatalf("/readyz while loading: %d %v, want 503 starting", code, r)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("answering while loading took %s", took)
	}

	barrier.release()
	select {
	case <-e.n.Search().Loaded():
	case <-time.After(testwait.Scaled(60 * time.Second)):
		t.Fatal("the index was not ready within 60 s of its release")
	}
	if code, r := e.getJSON("/readyz"); code != 200 || r["status"] != "ready" {
		t.Fatalf("/readyz once loaded: %d %v", code, r)
	}
	if _, h := e.getJSON("/api/v1/health"); h["status"] != "ok" || h["search_loading"] != nil {
		t.Fatalf("health once loaded: %v", h)
	}
	got := search(t, e, nil, nostr.Filter{Search: "quokka lighthouse"})
	if len(got) != 1 || got[0].ID != fresh.ID {
		t.Fatalf("the event written while loading: found %v, want it once", ids(got))
	}
	if n := e.n.Search().Count(); n != before+1 {
		t.Fatalf("%d docs indexed after the load, want %d: the event written meanwhile indexed once", n, before+1)
	}
}

// A relay whose index was never built (a first start over a store of
// events) serves while the index is built from the store, and the build
// and the writes made meanwhile leave each event indexed once.
func TestSearchLoading_FirstStartBuildsBehindTheRelay(t *testing.T) {
	e := startEnv(t, func(o *node.Options) { o.Search.Enabled = false })
	a := newUser()
	c := e.connect(nil)
	const stored = 1200 // the build reports its progress every 500
	for i := range stored {
		e.mustPublish(c, memory(a, fmt.Sprintf("ops/host%d", i), fmt.Sprintf(`{"summary":"host %d runs the nightly backup job"}`, i)))
	}
	e.stop()
	held := make(chan struct{})
	entered := make(chan struct{})
	var once, releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(held) }) })
	withSearch(&e.opts)
	e.opts.Search.Progress = func(done, total int) {
		once.Do(func() { close(entered); <-held })
	}
	e.loading = true
	e.start()
	select {
	case <-entered:
	case <-time.After(testwait.Scaled(30 * time.Second)):
		t.Fatal("the build never began")
	}
	c = e.connect(nil)
	fresh := e.mustPublish(c, memory(a, "ops/lighthouse", `{"summary":"the lighthouse keeper rotates the quokka credentials"}`))
	_, closed := fetchOnce(t, c, nostr.Filter{Search: "quokka"})
	if !strings.HasPrefix(closed, "error: search index is loading (") {
		t.Fatalf("search while building: CLOSED %q", closed)
	}
	if code, r := e.getJSON("/readyz"); code != http.StatusServiceUnavailable || r["search_loading"].(map[string]any)["step"] != "rebuilding" {
		t.Fatalf("/readyz while building: %d %v", code, r)
	}
	releaseOnce.Do(func() { close(held) })
	<-e.n.Search().Loaded()
	got := search(t, e, nil, nostr.Filter{Search: "quokka lighthouse"})
	if len(got) != 1 || got[0].ID != fresh.ID {
		t.Fatalf("the event written while building: found %v, want it once", ids(got))
	}
	if n := e.n.Search().Count(); n != stored+1 {
		t.Fatalf("%d docs indexed, want %d", n, stored+1)
	}
}
