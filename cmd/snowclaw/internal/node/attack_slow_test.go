package node_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/testwait"
)

// Finding 5: subscribers that never read must not slow anyone else. Each
// gets a bounded queue; when it overflows the subscriber is closed.

// dialTinyBuffer opens a websocket whose socket receive buffer is as
// small as the kernel allows, so the relay's writes to it stall early.
func dialTinyBuffer(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{
		HandshakeTimeout: 5 * time.Second,
		ReadBufferSize:   1024,
		NetDialContext: (&net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
			var serr error
			err := rc.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 2048)
			})
			return errors.Join(err, serr)
		}}).DialContext,
	}
	conn, _, err := d.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// readUntil reads frames until one contains want, or fails.
func readUntil(t *testing.T, conn *websocket.Conn, want string) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		_, b, err := conn.ReadMessage()
		if err != nil {
			t.Fatalf("waiting for %s: %v", want, err)
		}
		if strings.Contains(string(b), want) {
			return
		}
	}
}

// TestAttack_SlowSubscribersDoNotStallPublishers: five subscribers
// subscribe, see their EOSE (the barrier: the subscription is live), and
// never read again. An unrelated publisher's every OK still comes within
// two seconds, and the slow subscribers are disconnected.
func TestAttack_SlowSubscribersDoNotStallPublishers(t *testing.T) {
	e := startEnv(t, func(o *node.Options) { o.HTTP.SendQueueBytes = 64 << 10 })
	const slow = 5
	baseline := runtime.NumGoroutine()
	var subs []*websocket.Conn
	for i := range slow {
		conn := dialTinyBuffer(t, e.url)
		sub := fmt.Sprintf("slow%d", i)
		if err := conn.WriteJSON([]any{"REQ", sub, nostr.Filter{Kinds: []int{1}}}); err != nil {
			t.Fatal(err)
		}
		readUntil(t, conn, `"EOSE","`+sub+`"`)
		subs = append(subs, conn)
	}

	pub := e.connect(nil)
	alice := newUser()
	filler := strings.Repeat("x", 16<<10)
	var worst time.Duration
	for i := range 200 {
		evt := mkEvent(alice, 1, nil, fmt.Sprintf("%d %s", i, filler))
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := pub.Publish(ctx, evt)
		cancel()
		took := time.Since(start)
		if err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
		worst = max(worst, took)
		if took > 2*time.Second {
			t.Fatalf("OK %d took %s: the publisher waited on slow subscribers", i, took)
		}
	}
	t.Logf("slowest OK: %s", worst)

	// each slow subscriber now finds its connection ended: reading drains
	// what was delivered and then fails other than by timing out
	for i, conn := range subs {
		conn.SetReadDeadline(time.Now().Add(15 * time.Second))
		var err error
		reason := ""
		for err == nil {
			var b []byte
			_, b, err = conn.ReadMessage()
			if strings.Contains(string(b), "too slow") {
				reason = string(b)
			}
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("slow subscriber %d is still connected", i)
		}
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			reason = ce.Text
		}
		t.Logf("slow subscriber %d: %v (reason seen: %q)", i, err, reason)
	}

	// nothing of theirs is left running (reader, writer, pinger, senders
	// waiting for room): only the publisher's connection remains
	if !testwait.Until(testwait.DefaultTimeout, func() bool { return runtime.NumGoroutine() <= baseline+6 }) {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines, %d before the slow subscribers came:\n%s", runtime.NumGoroutine(), baseline, buf[:runtime.Stack(buf, true)])
	}
}
