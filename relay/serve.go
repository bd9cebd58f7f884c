package relay

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/fasthttp/websocket"
)

// Serve accepts connections on ln until ctx is cancelled, then shuts down:
// no new connections, a close frame (1001 going away) to every open
// websocket, which ends its subscriptions, and up to five seconds for
// clients to hang up before the rest are cut. The store stays open until
// Close.
func (r *Relay) Serve(ctx context.Context, ln net.Listener) error {
	srv := r.httpServer()
	if r.opts.ServiceURL == "" {
		r.log.Info("no relay.service_url: NIP-42 AUTH and NIP-98 accept only the address a connection was accepted on (or a trusted proxy's X-Forwarded-Host); set service_url when clients use a DNS name")
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
	err := srv.Shutdown(shutCtx) // websockets are hijacked: not waited for
	r.CloseConnections(5 * time.Second)
	if serveErr := <-errc; serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return err
}

// CloseConnections says goodbye to every client and waits up to grace for
// them to go.
func (r *Relay) CloseConnections(grace time.Duration) {
	msg := websocket.FormatCloseMessage(websocket.CloseGoingAway, "relay shutting down")
	for _, c := range r.subs.all() {
		c.conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
	}
	deadline := time.Now().Add(grace)
	for len(r.subs.all()) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	for _, c := range r.subs.all() {
		c.cancel()
	}
}
