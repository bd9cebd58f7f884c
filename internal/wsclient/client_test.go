package wsclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"
)

// Many publishes in flight on one connection each get their own OK,
// whatever order the answers come in: every arriving frame wakes every
// waiter, so none sleeps through the frame it waits for while another
// was busy reading. The server answers a round only once it has every
// event of it, in reverse order.
func TestPublish_ConcurrentWaitersEachGetTheirOK(t *testing.T) {
	const n, rounds = 32, 20
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		up := websocket.Upgrader{}
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		for {
			var ids []string
			for len(ids) < n {
				var msg []json.RawMessage
				if err := conn.ReadJSON(&msg); err != nil {
					return
				}
				var evt nostr.Event
				if json.Unmarshal(msg[1], &evt) == nil {
					ids = append(ids, evt.ID)
				}
			}
			for i := len(ids) - 1; i >= 0; i-- {
				conn.WriteJSON([]any{"OK", ids[i], true, ""})
			}
		}
	}))
	defer srv.Close()
	c, err := Dial("ws" + strings.TrimPrefix(srv.URL, "http"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sk := nostr.GeneratePrivateKey()
	for round := range rounds {
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			evt := nostr.Event{Kind: 1, CreatedAt: nostr.Now(), Content: strings.Repeat("x", round*n+i), Tags: nostr.Tags{}}
			if err := evt.Sign(sk); err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				errs[i] = c.Publish(ctx, evt)
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, publish %d: %v", round, i, err)
			}
		}
	}
}
