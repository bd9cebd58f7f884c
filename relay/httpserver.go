package relay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"time"

	"github.com/fasthttp/websocket"
)

// HTTPOptions bound what one client may hold: how long its request may
// take to arrive, how long a response may sit unread, how large a body
// may be and how much a websocket may leave unread. Zero fields take the
// defaults below; tests shorten them.
type HTTPOptions struct {
	// TrustedProxies may speak for clients through X-Forwarded-For, -Host
	// and -Proto (origin.go). Default: none.
	TrustedProxies []netip.Prefix

	// ReadHeaderTimeout bounds the request line and headers (10s);
	// ReadTimeout the headers and the body together (30s): a slow client
	// trickling a body is dropped, not waited for.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	// WriteTimeout is how long one write of a response may block on a
	// client that does not read (30s). It restarts at every write, so a
	// long response that keeps moving (an export, an MCP answer) is never
	// cut, while a stalled reader is.
	WriteTimeout time.Duration
	// IdleTimeout closes a kept-alive connection waiting for its next
	// request (120s).
	IdleTimeout time.Duration
	// MaxBodyBytes caps every request body (1 MiB, the largest any
	// endpoint takes); larger is answered 413.
	MaxBodyBytes int64

	// SendQueueBytes is how much may wait unwritten for one websocket
	// before the relay closes it as too slow to read (4 MiB; outbox.go).
	SendQueueBytes int

	// QuietChallenge is how long a new websocket may say nothing before
	// the relay sends it its NIP-42 challenge unasked (500 ms; conn.go
	// serveWS): a client waiting to authenticate gets it well inside
	// the 800 ms welshman's attemptAuth waits, while a client that asks
	// at once (welshman sends its first REQ about 100 ms after the socket
	// opens) is challenged only when what it asks needs it.
	QuietChallenge time.Duration
}

func (o HTTPOptions) withDefaults() HTTPOptions {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.ReadHeaderTimeout, 10*time.Second)
	def(&o.ReadTimeout, 30*time.Second)
	def(&o.WriteTimeout, 30*time.Second)
	def(&o.IdleTimeout, 120*time.Second)
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = maxAPIBody
	}
	if o.SendQueueBytes <= 0 {
		o.SendQueueBytes = 4 << 20
	}
	def(&o.QuietChallenge, 500*time.Millisecond)
	return o
}

// httpServer is the server Serve runs. Hijacked websockets lose the
// server's deadlines (net/http clears them) and keep their own: a read
// deadline renewed by every message and pong, a write deadline per frame.
func (r *Relay) httpServer() *http.Server {
	o := r.opts.HTTP.withDefaults()
	return &http.Server{
		Handler:           r.Handler(),
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		WriteTimeout:      o.WriteTimeout,
		IdleTimeout:       o.IdleTimeout,
	}
}

// guardHTTP reads every plain request's body up front, within the
// server's read timeout and the size cap, so no handler waits on a slow
// body and every NIP-98 payload check sees the whole of it, and gives the
// response a write deadline that restarts at each write. Websocket
// upgrades pass untouched.
func (r *Relay) guardHTTP(next http.Handler) http.Handler {
	o := r.opts.HTTP.withDefaults()
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if websocket.IsWebSocketUpgrade(req) {
			next.ServeHTTP(w, req)
			return
		}
		w = &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), d: o.WriteTimeout}
		req = req.WithContext(context.WithValue(req.Context(), clientIPKey{}, r.remoteIP(req)))
		if err := readBody(w, req, o.MaxBodyBytes); err != nil {
			var big *http.MaxBytesError
			switch {
			case errors.As(err, &big):
				w.Header().Set("Connection", "close")
				writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("invalid: the request body is larger than %d bytes", o.MaxBodyBytes))
			case errors.Is(err, os.ErrDeadlineExceeded):
				w.Header().Set("Connection", "close")
				writeError(w, http.StatusRequestTimeout, "error: the request body did not arrive in time")
			default:
				writeError(w, http.StatusBadRequest, "invalid: could not read the request body")
			}
			return
		}
		next.ServeHTTP(w, req)
	})
}

// readBody replaces req.Body with its bytes, read through MaxBytesReader.
func readBody(w http.ResponseWriter, req *http.Request, limit int64) error {
	if req.Body == nil || req.Body == http.NoBody {
		return nil
	}
	if req.ContentLength > limit {
		return &http.MaxBytesError{Limit: limit}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, limit))
	req.Body.Close()
	if err != nil {
		return err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	return nil
}

// deadlineWriter pushes the write deadline forward before each write.
type deadlineWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func (dw *deadlineWriter) extend() { dw.rc.SetWriteDeadline(time.Now().Add(dw.d)) }

func (dw *deadlineWriter) Write(p []byte) (int, error) {
	dw.extend()
	return dw.ResponseWriter.Write(p)
}

func (dw *deadlineWriter) FlushError() error {
	dw.extend()
	return dw.rc.Flush()
}

func (dw *deadlineWriter) Flush() { dw.FlushError() }

func (dw *deadlineWriter) Unwrap() http.ResponseWriter { return dw.ResponseWriter }
