package snowclaw_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/snowclaw/snowclaw"
)

type fullErr struct{}

func (fullErr) Error() string                { return "error: disk full" }
func (fullErr) ErrorReason() snowclaw.Reason { return snowclaw.ReasonDiskFull }

func TestReasons(t *testing.T) {
	for _, c := range []struct {
		err    error
		reason snowclaw.Reason
		text   string
		status int
	}{
		{snowclaw.Invalid("bad %s", "tag"), snowclaw.ReasonInvalid, "invalid: bad tag", http.StatusBadRequest},
		{snowclaw.Blocked("no"), snowclaw.ReasonBlocked, "blocked: no", http.StatusForbidden},
		{snowclaw.Restricted("owner only"), snowclaw.ReasonRestricted, "restricted: owner only", http.StatusForbidden},
		{snowclaw.Duplicate("have it"), snowclaw.ReasonDuplicate, "duplicate: have it", http.StatusConflict},
		{snowclaw.RateLimited("slow down"), snowclaw.ReasonRateLimited, "rate-limited: slow down", http.StatusTooManyRequests},
		{snowclaw.AuthRequired("who?"), snowclaw.ReasonAuthRequired, "auth-required: who?", http.StatusUnauthorized},
		{snowclaw.PoW("difficulty 20"), snowclaw.ReasonPoW, "pow: difficulty 20", http.StatusBadRequest},
		{snowclaw.Unsupported("search is off"), snowclaw.ReasonUnsupported, "blocked: search is off", http.StatusServiceUnavailable},
		{snowclaw.NotFound("no such memory"), snowclaw.ReasonNotFound, "invalid: no such memory", http.StatusNotFound},
		{snowclaw.Internal("store failed"), snowclaw.ReasonError, "error: store failed", http.StatusInternalServerError},
		{snowclaw.Unavailable("shutting down; try again"), snowclaw.ReasonUnavailable, "error: shutting down; try again", http.StatusServiceUnavailable},
		{snowclaw.Blocked("%s", "100%"), snowclaw.ReasonBlocked, "blocked: 100%", http.StatusForbidden},
		{fullErr{}, snowclaw.ReasonDiskFull, "error: disk full", http.StatusInsufficientStorage},
		{fmt.Errorf("wrapped: %w", snowclaw.Restricted("x")), snowclaw.ReasonRestricted, "wrapped: restricted: x", http.StatusForbidden},
		// untyped errors are failures, whatever their text says
		{errors.New("blocked: looks like a reason"), snowclaw.ReasonError, "error: blocked: looks like a reason", http.StatusInternalServerError},
		{io.EOF, snowclaw.ReasonError, "error: EOF", http.StatusInternalServerError},
	} {
		if got := snowclaw.ReasonOf(c.err); got != c.reason {
			t.Errorf("ReasonOf(%q) = %v, want %v", c.err, got, c.reason)
		}
		if got := snowclaw.Text(c.err); got != c.text {
			t.Errorf("Text(%q) = %q, want %q", c.err, got, c.text)
		}
		if got := snowclaw.ReasonOf(c.err).Status(); got != c.status {
			t.Errorf("status of %q = %d, want %d", c.err, got, c.status)
		}
	}
}

func TestReasonKeepsCause(t *testing.T) {
	err := snowclaw.Internal("could not save: %v", io.ErrUnexpectedEOF)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("%v does not wrap its cause", err)
	}
	if snowclaw.Reason(99).Prefix() != "error" || snowclaw.Reason(-1).Status() != http.StatusInternalServerError {
		t.Error("an unknown reason is not an error")
	}
}

// TestParseRefusal: a refusal read off the wire keeps its reason and its
// words; text without a known prefix is a failure, kept whole.
func TestParseRefusal(t *testing.T) {
	for _, c := range []struct {
		text   string
		reason snowclaw.Reason
		out    string
	}{
		{"invalid: no such memory", snowclaw.ReasonInvalid, "invalid: no such memory"},
		// a prefix several reasons share reads as the one it is named for
		{"blocked: search (NIP-50) is turned off", snowclaw.ReasonBlocked, "blocked: search (NIP-50) is turned off"},
		// prefixes outside NIP-01 are no reason (the relay sent them once)
		{"not-found: no such memory", snowclaw.ReasonError, "error: not-found: no such memory"},
		{"unsupported: search is off", snowclaw.ReasonError, "error: unsupported: search is off"},
		{"auth-required: sign in", snowclaw.ReasonAuthRequired, "auth-required: sign in"},
		{"error: disk full: 3 MiB left", snowclaw.ReasonError, "error: disk full: 3 MiB left"},
		{"connection refused", snowclaw.ReasonError, "error: connection refused"},
		{"nonsense: words", snowclaw.ReasonError, "error: nonsense: words"},
	} {
		err := snowclaw.ParseRefusal(c.text)
		if snowclaw.ReasonOf(err) != c.reason || snowclaw.Text(err) != c.out {
			t.Errorf("ParseRefusal(%q) = %v %q, want %v %q", c.text, snowclaw.ReasonOf(err), snowclaw.Text(err), c.reason, c.out)
		}
	}
}

// TestRetryable: only an error: that says to try again is sent again; a
// refusal of any other reason is the answer, whatever its words.
func TestRetryable(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{"error: this relay instance is 8 changes behind the shared store; try again in a few seconds", true},
		{"error: search index is loading (62% done), try again shortly", true},
		{snowclaw.Text(snowclaw.Internal("could not look up the stored version; try again")), true},
		{"error: disk full: the relay has 3 MiB of disk left, below its reserve of 64 MiB; nothing was stored, try again later", true},
		{"error: could not store the event", false},
		{"restricted: not a member; try again after joining", false},
		{"rate-limited: slow down, try again", false},
		{"invalid: try again", false},
		{"try again", false},
		{"", false},
	} {
		if got := snowclaw.Retryable(c.text); got != c.want {
			t.Errorf("Retryable(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

// TestStoreFailed: a store failure reaches a client as one retryable
// sentence and a 503, however it was wrapped on the way, while its whole
// text (the driver's words) stays in the error for the log.
func TestStoreFailed(t *testing.T) {
	driver := errors.New("failed to connect to `user=snowclaw database=snowclaw`: 127.0.0.1:55432 (127.0.0.1): dial error: dial tcp 127.0.0.1:55432: connect: connection refused")
	failed := snowclaw.StoreFailed(fmt.Errorf("storing events: %w", driver), "storing event %s", "ab12")
	const want = "error: the relay's store is unavailable; try again in a few seconds"
	for name, err := range map[string]error{
		"as made":            failed,
		"wrapped with %w":    fmt.Errorf("publishing: %w", failed),
		"formatted into one": snowclaw.Internal("reading the store: %v", failed),
		"marked twice":       snowclaw.StoreFailed(failed, "again"),
	} {
		if got := snowclaw.Text(err); got != want {
			t.Errorf("%s: Text = %q, want %q", name, got, want)
		}
		if !snowclaw.Retryable(snowclaw.Text(err)) {
			t.Errorf("%s: %q is not retryable", name, snowclaw.Text(err))
		}
		if r := snowclaw.ReasonOf(err); r != snowclaw.ReasonUnavailable || r.Status() != http.StatusServiceUnavailable {
			t.Errorf("%s: reason %v (%d), want the store unavailable (503)", name, r, r.Status())
		}
		if !errors.Is(err, driver) {
			t.Errorf("%s: the driver's error is not in the chain", name)
		}
		if !strings.Contains(err.Error(), "(storing event ab12): storing events: failed to connect") || !strings.Contains(err.Error(), "127.0.0.1:55432") {
			t.Errorf("%s: Error() = %q lost the driver's words the log needs", name, err)
		}
	}
	// the store's own refusals keep their reason and words
	tooBig := snowclaw.Invalid("the event has more tags than the store holds")
	if got := snowclaw.StoreFailed(tooBig, "storing"); got != tooBig {
		t.Errorf("StoreFailed(%q) = %q, want it unchanged", tooBig, got)
	}
	if snowclaw.StoreFailed(nil, "storing") != nil {
		t.Error("StoreFailed(nil) is not nil")
	}
}
