package relay

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/fiatjaf/khatru"
)

// connTracker remembers open websockets so shutdown can say goodbye to
// each; khatru's own Shutdown only works for servers it started itself.
type connTracker struct {
	mu    sync.Mutex
	conns map[*khatru.WebSocket]struct{}
	raw   map[net.Conn]struct{} // hijacked TCP connections, closed last
	done  chan struct{}
}

func newConnTracker() *connTracker {
	return &connTracker{conns: make(map[*khatru.WebSocket]struct{}), raw: make(map[net.Conn]struct{})}
}

func (t *connTracker) onConnect(ctx context.Context) {
	if ws := khatru.GetConnection(ctx); ws != nil {
		t.mu.Lock()
		t.conns[ws] = struct{}{}
		t.mu.Unlock()
	}
}

func (t *connTracker) onDisconnect(ctx context.Context) {
	if ws := khatru.GetConnection(ctx); ws != nil {
		t.mu.Lock()
		delete(t.conns, ws)
		n := len(t.conns)
		done := t.done
		t.mu.Unlock()
		if n == 0 && done != nil {
			select {
			case <-done:
			default:
				close(done)
			}
		}
	}
}

func (t *connTracker) connState(c net.Conn, s http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch s {
	case http.StateHijacked:
		t.raw[c] = struct{}{}
	case http.StateClosed:
		delete(t.raw, c)
	}
}

// closeAll sends every client a close frame (1001 going away), waits up
// to grace for them to hang up, then cuts what is left.
func (t *connTracker) closeAll(grace time.Duration) {
	t.mu.Lock()
	t.done = make(chan struct{})
	done := t.done
	conns := make([]*khatru.WebSocket, 0, len(t.conns))
	for ws := range t.conns {
		conns = append(conns, ws)
	}
	t.mu.Unlock()
	if len(conns) == 0 {
		close(done)
	}
	msg := websocket.FormatCloseMessage(websocket.CloseGoingAway, "relay shutting down")
	for _, ws := range conns {
		ws.WriteMessage(websocket.CloseMessage, msg)
	}
	select {
	case <-done:
	case <-time.After(grace):
	}
	t.mu.Lock()
	for c := range t.raw {
		c.Close()
	}
	t.mu.Unlock()
}

// Serve accepts connections on ln until ctx is cancelled, then shuts down:
// no new connections, a close frame to every open websocket (which ends
// their subscriptions), and a wait of up to five seconds for them to go.
// The store stays open until Close.
func (r *Relay) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           r.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ConnState:         r.conns.connState,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	r.log.Info("shutting down: closing connections")
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(shutCtx)
	r.conns.closeAll(5 * time.Second)
	if serveErr := <-errc; serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return err
}
