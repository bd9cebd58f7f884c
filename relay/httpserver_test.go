package relay

import (
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
			// a slow producer, 900ms in all: the pause is the behaviour
			// under test (a wall-clock timeout), not a wait
			time.Sleep(timeout / 2)
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
