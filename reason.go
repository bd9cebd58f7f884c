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
	ReasonUnsupported
	ReasonNotFound
	// ReasonDiskFull is an "error:" to websocket clients (NIP-01 has no
	// prefix for it) and 507 Insufficient Storage over HTTP.
	ReasonDiskFull
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
	ReasonUnsupported:  {"unsupported", http.StatusServiceUnavailable},
	ReasonNotFound:     {"not-found", http.StatusNotFound},
	ReasonDiskFull:     {"error", http.StatusInsufficientStorage},
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
// (errors.As), or ReasonError for an error that carries none. It never
// reads the text.
func ReasonOf(err error) Reason {
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

// Unsupported: the relay does not offer this (search off, say).
func Unsupported(format string, args ...any) error {
	return Refuse(ReasonUnsupported, format, args...)
}

// NotFound: no such thing, or not the asker's to know of.
func NotFound(format string, args ...any) error { return Refuse(ReasonNotFound, format, args...) }

// Internal: the relay failed ("error: …"); the client may try again.
func Internal(format string, args ...any) error { return Refuse(ReasonError, format, args...) }

// Text is what a client reads for err: its own text when it carries a
// reason (that text starts with the prefix), else the text of a failure,
// "error: " and the error's.
func Text(err error) string {
	var r Reasoner
	if errors.As(err, &r) {
		return err.Error()
	}
	return "error: " + err.Error()
}

// ParseRefusal reads a refusal that arrived as text over the wire (an OK
// or CLOSED message, an API error body): the text begins with its
// reason's NIP-01 prefix, which is how the protocol encodes the reason.
// Text without a known prefix is a failure and keeps its words whole.
func ParseRefusal(text string) error {
	prefix, msg, ok := strings.Cut(text, ": ")
	if ok {
		for r := Reason(0); r < numReasons; r++ {
			if r != ReasonDiskFull && r.Prefix() == prefix {
				return &Error{Reason: r, Message: msg}
			}
		}
	}
	return &Error{Reason: ReasonError, Message: text}
}

// tryAgain ends the message of every refusal the relay expects to pass
// if the same request is sent again later unchanged: an instance behind
// the shared store, a search index loading or being rebuilt, a store
// that failed a lookup, a disk below its reserve. NIP-01 has no prefix
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
