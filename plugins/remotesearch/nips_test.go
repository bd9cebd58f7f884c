package remotesearch

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a log destination the layer's goroutines may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A remote whose NIP-11 fails is logged as a warning once, however often
// it is asked (its failures are not kept, so each use asks again); one
// that serves no document is logged once and searched without NIP-50.
func TestNIP11TroubleLoggedOnce(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := "ws" + strings.TrimPrefix(dead.URL, "http")
	dead.Close()
	noDoc := httptest.NewServer(http.NotFoundHandler())
	defer noDoc.Close()
	noDocURL := "ws" + strings.TrimPrefix(noDoc.URL, "http")

	var logs syncBuffer
	now := time.Now()
	l := &Layer{
		o:   Options{HTTPClient: http.DefaultClient},
		log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
		now: func() time.Time { return now },
	}
	r := &remote{Remote: Remote{URL: deadURL, Trust: 1}}
	for range 3 {
		if _, err := l.nipsOf(context.Background(), r); !errors.Is(err, errNIP11) {
			t.Fatalf("a dead remote's NIP-11: %v", err)
		}
	}
	if n := strings.Count(logs.String(), deadURL); n != 1 {
		t.Fatalf("the dead remote logged %d times:\n%s", n, logs.String())
	}

	nd := &remote{Remote: Remote{URL: noDocURL, Trust: 1}}
	for range 2 {
		nips, err := l.nipsOf(context.Background(), nd)
		if err != nil || nips[50] {
			t.Fatalf("no document: nips %v, err %v", nips, err)
		}
		now = now.Add(2 * nipsTTL) // asked again, not from the cached answer
	}
	if n := strings.Count(logs.String(), noDocURL); n != 1 || !strings.Contains(logs.String(), "404") {
		t.Fatalf("the remote without NIP-11 logged %d times:\n%s", n, logs.String())
	}
}
