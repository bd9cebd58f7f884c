package ollama

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
)

// Errors that the client's errors match with errors.Is, so a caller can
// tell a server that is down (wait, or fall back to another embedder) from
// a configuration mistake (tell the operator) without parsing messages.
var (
	// ErrUnavailable: Ollama could not be reached at all (connection
	// refused, unknown host), or, for a request answered in one piece,
	// gave no answer within the timeout.
	ErrUnavailable = errors.New("ollama unavailable")
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

// Error is an error with its own message that unwraps to its causes, so
// callers match the sentinels and api.StatusError with errors.Is/As.
type Error struct {
	Msg  string
	Errs []error
}

func (e *Error) Error() string   { return e.Msg }
func (e *Error) Unwrap() []error { return e.Errs }

// transient reports whether a failed attempt is worth retrying: only
// failures of the connection or of the server itself.
func (o op) transient(err error) bool {
	var se api.StatusError
	if errors.As(err, &se) {
		return se.StatusCode >= 500 || se.StatusCode == http.StatusTooManyRequests
	}
	if timedOut(err) {
		return !o.stream
	}
	return unreachable(err) || dropped(err)
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

// describe turns the last error of a call into a message naming the host
// and model and saying what to do. attempt is the 0-based index of the
// failed attempt. The result unwraps to err and to the matching sentinel.
func (c *Client) describe(o op, err error, attempt int) error {
	tries := ""
	if attempt > 0 {
		tries = fmt.Sprintf(" (%d attempts)", attempt+1)
	}
	serve := fmt.Sprintf("is `ollama serve` running and the model pulled (`ollama pull %s`)?", c.model)
	wrap := func(sentinel error, format string, args ...any) error {
		e := &Error{Msg: fmt.Sprintf("ollama at %s: ", c.host) + fmt.Sprintf(format, args...), Errs: []error{err}}
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
		msg = clip(msg, 300)
		if se.StatusCode == http.StatusNotFound {
			// Ollama always explains its 404s; a bare one comes from
			// something else listening at the host.
			if strings.TrimSpace(se.ErrorMessage) == "" {
				return wrap(ErrModelNotFound, "model not found: run `ollama pull %s`, or check that the host is an Ollama server (HTTP 404: %s)",
					c.model, msg)
			}
			return wrap(ErrModelNotFound, "model not found: run `ollama pull %s` (HTTP 404: %s)", c.model, msg)
		}
		return wrap(nil, "model %q: HTTP %d: %s%s", c.model, se.StatusCode, msg, tries)
	}
	var ae api.AuthorizationError
	if errors.As(err, &ae) {
		return wrap(nil, "model %q: unauthorized (HTTP %d); check the host, a local Ollama needs no sign-in", c.model, ae.StatusCode)
	}
	switch {
	case errors.Is(err, ErrEmptyReply):
		return wrap(nil, "model %q: empty reply; the model wrote no text, try again or choose another model", c.model)
	case errors.Is(err, syscall.ECONNREFUSED):
		return wrap(ErrUnavailable, "connection refused for model %q%s; %s", c.model, tries, serve)
	case unreachable(err):
		return wrap(ErrUnavailable, "cannot connect for model %q: %v%s; %s", c.model, err, tries, serve)
	case errors.Is(err, ErrTimeout) && o.stream:
		return wrap(nil, "model %q: no reply within %s; the model may still be loading or be too slow here: raise the timeout or choose a smaller model",
			c.model, c.timeout)
	case errors.Is(err, ErrTimeout):
		return wrap(ErrUnavailable, "model %q: no reply within %s%s; %s", c.model, c.timeout, tries, serve)
	case timedOut(err):
		return wrap(ErrTimeout, "model %q: request timed out: %v%s; raise the HTTP client's timeout or choose a smaller model", c.model, err, tries)
	case dropped(err):
		return wrap(nil, "model %q: %v%s; did Ollama crash? see its log", c.model, err, tries)
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) {
		return wrap(nil, "model %q: invalid response from %s (is the host an Ollama server?): %v", c.model, o.path, err)
	}
	return wrap(nil, "model %q: %v%s", c.model, err, tries)
}
