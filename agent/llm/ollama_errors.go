package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/ollama/ollama/api"
	"github.com/snowclaw/snowclaw/internal/ollamahost"
)

// Errors that Chat's errors match with errors.Is, so the agent can tell a
// server that is down (wait and retry later) from a configuration mistake
// (tell the operator) without parsing messages.
var (
	// ErrOllamaUnavailable: Ollama could not be reached at all
	// (connection refused, unknown host).
	ErrOllamaUnavailable = errors.New("ollama unavailable")
	// ErrModelNotFound: the server answered 404, the model is not pulled.
	ErrModelNotFound = errors.New("model not found")
	// ErrTimeout: an attempt got no complete reply within the timeout.
	ErrTimeout = errors.New("no reply within the timeout")
	// ErrEmptyReply: the model answered with no text.
	ErrEmptyReply = errors.New("empty reply")
)

// errAttemptTimeout is the cause of a per-attempt deadline, to tell it
// from the caller's own.
var errAttemptTimeout = errors.New("attempt timed out")

// errIncomplete: the body ended without Ollama's final done:true object,
// which the api client does not report (it ignores read errors).
var errIncomplete = errors.New("connection closed before the reply was complete")

const hintServe = "is Ollama running? start it with `ollama serve`"

// transient reports whether a failed attempt is worth retrying: only
// failures of the connection or of the server itself.
func transient(err error) bool {
	var se api.StatusError
	if errors.As(err, &se) {
		return se.StatusCode >= 500 || se.StatusCode == http.StatusTooManyRequests
	}
	if timedOut(err) {
		return false
	}
	return ollamahost.Unreachable(err) || dropped(err)
}

// dropped reports a connection lost after it was made.
func dropped(err error) bool {
	return errors.Is(err, errIncomplete) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// timedOut covers our per-attempt timeout and one set on a caller's
// http.Client.
func timedOut(err error) bool {
	if errors.Is(err, ErrTimeout) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// describe turns the last error of a Chat into a message naming the host
// and model and saying what to do. attempt is the 0-based index of the
// failed attempt. The result unwraps to err and to the matching sentinel.
func (o *Ollama) describe(err error, attempt int) error {
	tries := ""
	if attempt > 0 {
		tries = fmt.Sprintf(" (%d attempts)", attempt+1)
	}
	wrap := func(sentinel error, format string, args ...any) error {
		e := &ollamahost.Error{Msg: fmt.Sprintf("ollama at %s: ", o.host) + fmt.Sprintf(format, args...), Errs: []error{err}}
		if sentinel != nil && !errors.Is(err, sentinel) {
			e.Errs = append(e.Errs, sentinel)
		}
		return e
	}

	var se api.StatusError
	if errors.As(err, &se) {
		msg := strings.TrimSpace(se.ErrorMessage)
		if msg == "" {
			msg = strings.TrimSpace(se.Status)
		}
		msg = ollamahost.Clip(msg, 300)
		if se.StatusCode == http.StatusNotFound {
			// Ollama always explains its 404s; a bare one comes from
			// something else listening at the host.
			if strings.TrimSpace(se.ErrorMessage) == "" {
				return wrap(ErrModelNotFound, "model not found: run `ollama pull %s`, or check that the host is an Ollama server (HTTP 404: %s)",
					o.model, msg)
			}
			return wrap(ErrModelNotFound, "model not found: run `ollama pull %s` (HTTP 404: %s)", o.model, msg)
		}
		return wrap(nil, "model %q: HTTP %d: %s%s", o.model, se.StatusCode, msg, tries)
	}
	var ae api.AuthorizationError
	if errors.As(err, &ae) {
		return wrap(nil, "model %q: unauthorized (HTTP %d); check the host, a local Ollama needs no sign-in", o.model, ae.StatusCode)
	}
	switch {
	case errors.Is(err, ErrEmptyReply):
		return wrap(nil, "model %q: empty reply; the model wrote no text, try again or choose another model", o.model)
	case errors.Is(err, syscall.ECONNREFUSED):
		return wrap(ErrOllamaUnavailable, "model %q: connection refused%s; %s", o.model, tries, hintServe)
	case ollamahost.Unreachable(err):
		return wrap(ErrOllamaUnavailable, "model %q: cannot connect: %v%s; %s", o.model, err, tries, hintServe)
	case errors.Is(err, ErrTimeout):
		return wrap(nil, "model %q: no reply within %s; the model may still be loading or be too slow here: raise the timeout or choose a smaller model",
			o.model, o.timeout)
	case timedOut(err):
		return wrap(ErrTimeout, "model %q: request timed out: %v; raise the HTTP client's timeout or choose a smaller model", o.model, err)
	case dropped(err):
		return wrap(nil, "model %q: %v%s; did Ollama crash? see its log", o.model, err, tries)
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) {
		return wrap(nil, "model %q: invalid response from /api/chat (is the host an Ollama server?): %v", o.model, err)
	}
	return wrap(nil, "model %q: %v%s", o.model, err, tries)
}

// ctxError reports the caller's context ending; errors.Is(err,
// context.Canceled / DeadlineExceeded) holds.
func (o *Ollama) ctxError(err error) error {
	return fmt.Errorf("ollama at %s: model %q: %w", o.host, o.model, err)
}

func (o *Ollama) errorf(format string, args ...any) error {
	return fmt.Errorf("ollama at %s: model %q: "+format, append([]any{o.host, o.model}, args...)...)
}

// The api client loses the HTTP status when an error body is empty or not
// JSON (a proxy's 502 page, a host that is not Ollama), which would turn a
// retryable 502 into "empty reply". A transport wrapper records the status
// of each request in a holder carried by the request's context.

type statusRecordKey struct{}

type statusRecord struct {
	code   int
	status string
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
// the client could not see it, and reports a body cut short.
func (rec *statusRecord) explain(err error) error {
	var se api.StatusError
	var ae api.AuthorizationError
	if errors.As(err, &se) || errors.As(err, &ae) || errors.Is(err, ErrTimeout) {
		return err
	}
	if rec.code >= http.StatusBadRequest {
		return api.StatusError{StatusCode: rec.code, Status: rec.status}
	}
	if err == nil && rec.code != 0 && !rec.done {
		return errIncomplete
	}
	return err
}
