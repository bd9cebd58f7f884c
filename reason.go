package snowclaw

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Reason is why the relay refused something: an event (OK false), a
// subscription (CLOSED), an HTTP or MCP call. Each has the NIP-01
// machine-readable prefix clients see and the HTTP status the API
// answers with, so the transports agree on what went wrong without
// anyone reading an error's text back.
//
// Every prefix is one NIP-01 standardizes for OK and CLOSED (duplicate,
// pow, blocked, rate-limited, invalid, restricted, mute, error) or
// NIP-42's auth-required: a client knows those and nothing else, and
// reads an unknown prefix as no reason at all. A reason NIP-01 has no
// word for borrows the one whose meaning it shares, and keeps its own
// HTTP status (TestReasons_NIP01Prefixes holds them to it).
type Reason int

// The reasons. ReasonError, the zero value, is also every error that
// carries no reason (a failure, not a refusal).
const (
	ReasonError Reason = iota
	ReasonInvalid
	ReasonBlocked
	ReasonRestricted
	ReasonDuplicate
	ReasonRateLimited
	ReasonAuthRequired
	ReasonPoW
	// ReasonUnsupported is a feature this relay has turned off (search,
	// the agent, encrypted groups): blocked: to websocket clients, as
	// a refusal by the relay's own configuration, the same for everyone
	// and for as long as it runs so. Not error:, which is a failure
	// that may pass (and with "try again" asks for the request again),
	// nor restricted:, which NIP-42 keeps for a key that is not allowed
	// (another key could be). 503 over HTTP: the service is not
	// available here, and the prefix says it will not be.
	ReasonUnsupported
	// ReasonNotFound is no such thing, or none the asker may know of:
	// invalid: to websocket clients (the request names nothing there is
	// for it; sending it again gets the same answer), never restricted:,
	// which would tell an asker that what it may not read exists. 404
	// over HTTP.
	ReasonNotFound
	// ReasonDiskFull is an "error:" to websocket clients (NIP-01 has no
	// prefix for it) and 507 Insufficient Storage over HTTP.
	ReasonDiskFull
	// ReasonUnavailable is the relay unable to serve this for now (its
	// store unreachable, the agent shutting down): an error: whose
	// message says to try again (Retryable), and 503 over HTTP.
	ReasonUnavailable
	numReasons
)

var reasonInfo = [numReasons]struct {
	prefix string
	status int
}{
	ReasonError:        {"error", http.StatusInternalServerError},
	ReasonInvalid:      {"invalid", http.StatusBadRequest},
	ReasonBlocked:      {"blocked", http.StatusForbidden},
	ReasonRestricted:   {"restricted", http.StatusForbidden},
	ReasonDuplicate:    {"duplicate", http.StatusConflict},
	ReasonRateLimited:  {"rate-limited", http.StatusTooManyRequests},
	ReasonAuthRequired: {"auth-required", http.StatusUnauthorized},
	ReasonPoW:          {"pow", http.StatusBadRequest},
	ReasonUnsupported:  {"blocked", http.StatusServiceUnavailable},
	ReasonNotFound:     {"invalid", http.StatusNotFound},
	ReasonDiskFull:     {"error", http.StatusInsufficientStorage},
	ReasonUnavailable:  {"error", http.StatusServiceUnavailable},
}

func (r Reason) valid() Reason {
	if r < 0 || r >= numReasons {
		return ReasonError
	}
	return r
}

// Prefix is the NIP-01 machine-readable prefix ("blocked", "rate-limited" …).
func (r Reason) Prefix() string { return reasonInfo[r.valid()].prefix }

// Status is the HTTP status an API answers a refusal of this reason with.
func (r Reason) Status() int { return reasonInfo[r.valid()].status }

func (r Reason) String() string { return r.Prefix() }

// Error is a refusal: a reason and the message a person reads. Its text
// is what NIP-01 clients get, "prefix: message".
type Error struct {
	Reason  Reason
	Message string
	Err     error // the cause, when there is one (errors.Is/As reach it)
}

func (e *Error) Error() string { return e.Reason.Prefix() + ": " + e.Message }

func (e *Error) Unwrap() error { return e.Err }

// Reasoner is an error type of its own that knows its reason (a
// disk-full refusal, say); ReasonOf finds it as it finds an *Error.
type Reasoner interface {
	error
	ErrorReason() Reason
}

// ErrorReason makes *Error a Reasoner.
func (e *Error) ErrorReason() Reason { return e.Reason }

// ReasonOf is err's reason: that of the first Reasoner in its chain
// (errors.As), or ReasonError for an error that carries none; a store
// failure anywhere in the chain is ReasonUnavailable, whatever wraps it
// (see StoreError). It never reads the text.
func ReasonOf(err error) Reason {
	if _, ok := errors.AsType[*StoreError](err); ok {
		return ReasonUnavailable
	}
	var r Reasoner
	if errors.As(err, &r) {
		return r.ErrorReason()
	}
	return ReasonError
}

// Refuse makes a refusal of reason r, its message formatted as by
// fmt.Sprintf; an error among args is kept as the cause.
func Refuse(r Reason, format string, args ...any) error {
	e := &Error{Reason: r, Message: fmt.Sprintf(format, args...)}
	for _, a := range args {
		if err, ok := a.(error); ok {
			e.Err = err
			break
		}
	}
	return e
}

// Invalid: the event or request is malformed or breaks a rule of its form.
func Invalid(format string, args ...any) error { return Refuse(ReasonInvalid, format, args...) }

// Blocked: the relay refuses it by policy.
func Blocked(format string, args ...any) error { return Refuse(ReasonBlocked, format, args...) }

// Restricted: the sender may not do this.
func Restricted(format string, args ...any) error {
	return Refuse(ReasonRestricted, format, args...)
}

// Duplicate: it is already stored (or a version at least as new is).
func Duplicate(format string, args ...any) error { return Refuse(ReasonDuplicate, format, args...) }

// RateLimited: too much, too fast.
func RateLimited(format string, args ...any) error {
	return Refuse(ReasonRateLimited, format, args...)
}

// AuthRequired: authenticate (NIP-42, NIP-98) first.
func AuthRequired(format string, args ...any) error {
	return Refuse(ReasonAuthRequired, format, args...)
}

// PoW: not enough proof of work (NIP-13).
func PoW(format string, args ...any) error { return Refuse(ReasonPoW, format, args...) }

// Unsupported: the relay has turned this off (search, the agent):
// blocked: on the wire, 503 over HTTP (see ReasonUnsupported).
func Unsupported(format string, args ...any) error {
	return Refuse(ReasonUnsupported, format, args...)
}

// NotFound: no such thing, or not the asker's to know of: invalid: on the
// wire, 404 over HTTP (see ReasonNotFound).
func NotFound(format string, args ...any) error { return Refuse(ReasonNotFound, format, args...) }

// Internal: the relay failed ("error: …"); the client may try again.
func Internal(format string, args ...any) error { return Refuse(ReasonError, format, args...) }

// Unavailable: the relay cannot serve this for now ("error: …", 503 over
// HTTP); the message says to try again, which is what Retryable reads.
func Unavailable(format string, args ...any) error {
	return Refuse(ReasonUnavailable, format, args...)
}

// StoreError is the event store failing to do something: a driver's
// error, whose words name the store's host, port, user and database
// (pgx: "failed to connect to `user=… database=…`: host:port … connection
// refused"). Its Error is all of it, for the log. A client reads only
// Text's one sentence, which asks it to try again, however the error was
// wrapped on its way out, and an API answers 503: neither the words nor
// the cause are the client's, and what wrapped the failure knew no more
// than that the store failed.
type StoreError struct {
	Doing string // what the store failed at ("storing the event")
	Err   error
}

func (e *StoreError) Error() string {
	return "the event store failed (" + e.Doing + "): " + e.Err.Error()
}

func (e *StoreError) Unwrap() error { return e.Err }

// ErrorReason makes *StoreError a Reasoner.
func (e *StoreError) ErrorReason() Reason { return ReasonUnavailable }

// storeDown is all a client reads of a StoreError.
const storeDown = "the relay's store is unavailable; " + tryAgain + " in a few seconds"

// StoreFailed is what a client is answered when the event store failed
// at what doing says (formatted as by fmt.Sprintf, for the log: "reading
// the memories of %s"): err as a StoreError. An error that carries a
// reason already is returned as it is, its text the client's: the
// store's own refusal (an event PostgreSQL cannot hold is invalid:, a
// full disk), or a store failure marked before. Nil stays nil.
func StoreFailed(err error, doing string, args ...any) error {
	if err == nil || ReasonOf(err) != ReasonError {
		return err
	}
	return &StoreError{Doing: fmt.Sprintf(doing, args...), Err: err}
}

// Text is what a client reads for err: its own text when it carries a
// reason (that text starts with the prefix), else the text of a failure,
// "error: " and the error's; a store failure anywhere in err is the one
// sentence of StoreError. It is the only way an error becomes a client's
// text (the websocket, the API, MCP, a rights command's reply).
func Text(err error) string {
	if _, ok := errors.AsType[*StoreError](err); ok {
		return ReasonUnavailable.Prefix() + ": " + storeDown
	}
	var r Reasoner
	if errors.As(err, &r) {
		return err.Error()
	}
	return "error: " + err.Error()
}

// ParseRefusal reads a refusal that arrived as text over the wire (an OK
// or CLOSED message, an API error body): the text begins with its
// reason's NIP-01 prefix, which is how the protocol encodes the reason.
// A prefix several reasons share reads as the first of them, the one it
// is named for (error:, blocked:, invalid:): the wire carries no more.
// Text without a known prefix is a failure and keeps its words whole.
func ParseRefusal(text string) error {
	prefix, msg, ok := strings.Cut(text, ": ")
	if ok {
		for r := Reason(0); r < numReasons; r++ {
			if r.Prefix() == prefix {
				return &Error{Reason: r, Message: msg}
			}
		}
	}
	return &Error{Reason: ReasonError, Message: text}
}

// tryAgain ends the message of every refusal the relay expects to pass
// if the same request is sent again later unchanged: an instance behind
// the shared store, a search index loading or being rebuilt, a store
// that failed (StoreError), a disk below its reserve. NIP-01 has no prefix
// for it, so the words are the contract; clients read it with Retryable.
const tryAgain = "try again"

// Retryable reports whether text, a refusal as it arrived over the wire
// (OK, CLOSED or an API error body), asks the client to send the same
// request again: an "error:" whose message says to try again. Every
// other refusal is an answer, and sending it again gets the same one.
func Retryable(text string) bool {
	prefix, msg, ok := strings.Cut(text, ": ")
	return ok && prefix == ReasonError.Prefix() && strings.Contains(msg, tryAgain)
}
