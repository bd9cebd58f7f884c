package node_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/fiatjaf/eventstore/slicestore"
	"github.com/fiatjaf/khatru"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/wsclient"
	"github.com/snowclaw/snowclaw/plugins/remotesearch"
)

// A remote relay for the layered search tests, served on a random
// loopback port. hits counts every HTTP request that reaches it (NIP-11
// documents and websocket upgrades), so a test sees whether a search
// asked it at all.
type remoteRelay struct {
	url  string
	hits atomic.Int64
	srv  *httptest.Server
}

func serveRemote(t *testing.T, h http.Handler) *remoteRelay {
	t.Helper()
	rr := &remoteRelay{}
	rr.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rr.hits.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { rr.srv.CloseClientConnections(); rr.srv.Close() })
	rr.url = "ws" + strings.TrimPrefix(rr.srv.URL, "http")
	return rr
}

// publishTo stores evts on the relay at url as any client would.
func publishTo(t *testing.T, url string, evts ...nostr.Event) {
	t.Helper()
	c, err := wsclient.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, evt := range evts {
		if err := c.Publish(context.Background(), evt); err != nil {
			t.Fatalf("publishing to %s: %v", url, err)
		}
	}
}

// bareKhatru is a bare khatru relay over a RAM store, without NIP-50
// (its NIP-11 does not list 50), that asks every connection to
// authenticate and records the filters it is sent and whether any came
// from an authenticated connection.
type bareKhatru struct {
	*remoteRelay
	mu      sync.Mutex
	filters []nostr.Filter
	authed  []string
}

func startBareKhatru(t *testing.T) *bareKhatru {
	t.Helper()
	db := &slicestore.SliceStore{}
	if err := db.Init(); err != nil {
		t.Fatal(err)
	}
	k := khatru.NewRelay()
	k.OnConnect = append(k.OnConnect, khatru.RequestAuth)
	k.StoreEvent = append(k.StoreEvent, db.SaveEvent)
	k.ReplaceEvent = append(k.ReplaceEvent, db.ReplaceEvent)
	k.DeleteEvent = append(k.DeleteEvent, db.DeleteEvent)
	k.QueryEvents = append(k.QueryEvents, db.QueryEvents)
	b := &bareKhatru{}
	k.RejectFilter = append(k.RejectFilter, func(ctx context.Context, f nostr.Filter) (bool, string) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.filters = append(b.filters, f)
		if pk := khatru.GetAuthed(ctx); pk != "" {
			b.authed = append(b.authed, pk)
		}
		return false, ""
	})
	b.remoteRelay = serveRemote(t, k)
	return b
}

// scriptedRelay answers every REQ with the events of answer (sent as
// they are, forged ones included) and EOSE, after sending an AUTH
// challenge on connect; it records every frame it receives. Its NIP-11
// lists NIP-50.
type scriptedRelay struct {
	*remoteRelay
	answer func(sub string) [][]byte
	mu     sync.Mutex
	frames []string
}

func startScripted(t *testing.T, answer func(sub string) [][]byte) *scriptedRelay {
	t.Helper()
	return startScriptedNIP11(t, `{"name":"scripted","supported_nips":[1,11,50]}`, answer)
}

// startScriptedNIP11 is startScripted serving nip11 as its NIP-11
// document, or 404 Not Found when nip11 is "".
func startScriptedNIP11(t *testing.T, nip11 string, answer func(sub string) [][]byte) *scriptedRelay {
	t.Helper()
	s := &scriptedRelay{answer: answer}
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	s.remoteRelay = serveRemote(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") == "" {
			if nip11 == "" {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/nostr+json")
			w.Write([]byte(nip11))
			return
		}
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		conn.WriteJSON([]any{"AUTH", "challenge-" + nostr.GeneratePrivateKey()[:8]})
		for {
			_, b, err := conn.ReadMessage()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.frames = append(s.frames, string(b))
			s.mu.Unlock()
			var frame []json.RawMessage
			if json.Unmarshal(b, &frame) != nil || len(frame) < 2 {
				continue
			}
			var label, sub string
			json.Unmarshal(frame[0], &label)
			json.Unmarshal(frame[1], &sub)
			if label != "REQ" {
				continue
			}
			for _, evt := range s.answer(sub) {
				conn.WriteMessage(websocket.TextMessage, []byte(`["EVENT",`+strconvQuote(sub)+`,`+string(evt)+`]`))
			}
			conn.WriteJSON([]any{"EOSE", sub})
		}
	}))
	return s
}

func (s *scriptedRelay) received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.frames...)
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// hangingRelay accepts connections and NIP-11 requests and answers
// nothing until release is closed (the test's cleanup closes it).
func startHanging(t *testing.T) (*remoteRelay, chan struct{}) {
	t.Helper()
	release := make(chan struct{})
	rr := serveRemote(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	// registered after serveRemote's: runs first, so Close does not wait
	// on handlers still blocked
	t.Cleanup(func() { close(release) })
	return rr, release
}

// withRemotes points the node's layered search at remotes (url, trust,
// …) with timeout.
func withRemotes(timeout time.Duration, remotes ...any) func(*node.Options) {
	return func(o *node.Options) {
		o.Remote.Timeout = timeout
		for i := 0; i+1 < len(remotes); i += 2 {
			o.Remote.Remotes = append(o.Remote.Remotes, remotesearch.Remote{URL: remotes[i].(string), Trust: remotes[i+1].(float64)})
		}
	}
}
