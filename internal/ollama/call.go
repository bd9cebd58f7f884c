package ollama

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/ollama/ollama/api"
)

// op is what kind of request a call makes, which decides how its failures
// are read.
type op struct {
	path string // for messages
	// stream: the reply is a stream of objects ending with done:true (a
	// chat), and a model writing it token by token may simply be slow. So
	// a stream cut short is an error, and a timeout is final (a model too
	// slow once is likely too slow again). A request answered in one piece
	// (an embedding) that gets no answer in time finds the server hung or
	// overloaded: it is retried and reported as ErrUnavailable.
	stream bool
}

var (
	opChat  = op{path: "/api/chat", stream: true}
	opEmbed = op{path: "/api/embed"}
)

// call runs attempt until it succeeds, fails for good or has used up the
// retries, waiting a doubling backoff between attempts. The error it
// returns is described for the user (describe) or, when ctx ended, wraps
// ctx's error.
func (c *Client) call(ctx context.Context, o op, attempt func(ctx context.Context) error) error {
	wait := c.backoff
	for n := 0; ; n++ {
		if err := ctx.Err(); err != nil {
			return c.ctxError(err)
		}
		err := c.once(ctx, o, attempt)
		if err == nil {
			return nil
		}
		if cerr := ctx.Err(); cerr != nil {
			return c.ctxError(cerr)
		}
		if !o.transient(err) || n >= c.retries {
			return c.describe(o, err, n)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return c.ctxError(ctx.Err())
		case <-t.C:
		}
		wait *= 2
	}
}

// once makes one attempt bounded by the per-attempt timeout. It never
// panics: a panic in the api client is turned into an error.
func (c *Client) once(ctx context.Context, o op, attempt func(ctx context.Context) error) (err error) {
	actx, cancel := context.WithTimeoutCause(ctx, c.timeout, errAttemptTimeout)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("ollama client panic: %v", r)
		}
	}()
	rec := &statusRecord{stream: o.stream}
	err = attempt(context.WithValue(actx, statusRecordKey{}, rec))
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(actx), errAttemptTimeout) {
		err = fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return rec.explain(err)
}

// ctxError reports the caller's context ending; errors.Is(err,
// context.Canceled / DeadlineExceeded) holds.
func (c *Client) ctxError(err error) error {
	return c.Errorf("model %q: %w", c.model, err)
}

// The api client loses the HTTP status when an error body is empty or not
// JSON (a proxy's 502 page, a host that is not Ollama), which would turn a
// retryable 502 into "empty reply". A transport wrapper records the status
// of each request in a holder carried by the request's context.

type statusRecordKey struct{}

type statusRecord struct {
	code   int
	status string
	stream bool // the reply must end with done:true
	done   bool // Ollama's final object (done:true) was received
}

type statusTransport struct{ base http.RoundTripper }

func (t statusTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if rec, ok := r.Context().Value(statusRecordKey{}).(*statusRecord); ok && resp != nil {
		rec.code, rec.status = resp.StatusCode, resp.Status
	}
	return resp, err
}

// withStatusRecorder returns a copy of hc (nil: a new client) whose
// transport records statuses; the caller's client is left untouched.
func withStatusRecorder(hc *http.Client) *http.Client {
	c := &http.Client{}
	if hc != nil {
		*c = *hc
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = statusTransport{base: base}
	return c
}

// explain replaces what the api client reported with the HTTP status when
// the client could not see it, and reports a stream cut short.
func (rec *statusRecord) explain(err error) error {
	var se api.StatusError
	var ae api.AuthorizationError
	if errors.As(err, &se) || errors.As(err, &ae) || errors.Is(err, ErrTimeout) {
		return err
	}
	if rec.code >= http.StatusBadRequest {
		return api.StatusError{StatusCode: rec.code, Status: rec.status}
	}
	if err == nil && rec.stream && rec.code != 0 && !rec.done {
		return errIncomplete
	}
	return err
}
