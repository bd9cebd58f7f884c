package relay

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestGuardHTTP_LongResponseNotCut: the write timeout restarts at every
// write, so a response that keeps moving outlives it (an export, an MCP
// answer), where net/http's own WriteTimeout would cut it at 300ms.
func TestGuardHTTP_LongResponseNotCut(t *testing.T) {
	const timeout = 300 * time.Millisecond
	r := &Relay{opts: Options{HTTP: HTTPOptions{WriteTimeout: timeout}}}
	srv := httptest.NewUnstartedServer(r.guardHTTP(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for range 6 {
			io.WriteString(w, strings.Repeat("x", 1024))
			w.(http.Flusher).Flush()
			time.Sleep(timeout / 2) // a slow producer, 900ms in all
		}
	})))
	srv.Config.WriteTimeout = timeout
	srv.Start()
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || len(b) != 6*1024 {
		t.Fatalf("read %d bytes, err %v: the response was cut", len(b), err)
	}
}

// TestReplayCache: an id is taken once until it expires; a full cache
// refuses new ids rather than forgetting old ones.
func TestReplayCache(t *testing.T) {
	var c replayCache
	now := time.Now()
	if err := c.use("a", now, now); err != nil {
		t.Fatal(err)
	}
	if err := c.use("a", now, now.Add(30*time.Second)); !errors.Is(err, errReplayed) {
		t.Fatalf("replay within the window: %v", err)
	}
	later := now.Add(nip98Window + 2*time.Second)
	if err := c.use("a", now, later); err != nil {
		t.Fatalf("after expiry (the time check refuses it anyway): %v", err)
	}
	var full replayCache
	for i := range maxReplayIDs {
		if err := full.use(string(rune(i))+"/"+time.Duration(i).String(), now, now); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
	}
	if err := full.use("one more", now, now); !errors.Is(err, errReplaysFull) {
		t.Fatalf("full cache: %v", err)
	}
	if err := full.use("one more", now, later); err != nil {
		t.Fatalf("after the window the cache empties: %v", err)
	}
}
