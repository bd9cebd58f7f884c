package relay

import (
	"errors"
	"testing"

	"github.com/snowclaw/snowclaw"
)

// TestRejectReason: the metrics label comes from the refusal's reason,
// never from its text.
func TestRejectReason(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{snowclaw.Invalid("x"), "invalid"},
		{snowclaw.Blocked("x"), "blocked"},
		{snowclaw.Restricted("x"), "restricted"},
		{snowclaw.Duplicate("x"), "duplicate"},
		{snowclaw.RateLimited("x"), "rate-limited"},
		{snowclaw.AuthRequired("x"), "auth-required"},
		{snowclaw.PoW("x"), "pow"},
		{snowclaw.Internal("x"), "error"},
		{&diskFullError{}, "error"},
		// the label is the prefix the client read
		{snowclaw.Unsupported("x"), "blocked"},
		{snowclaw.NotFound("x"), "invalid"},
		{snowclaw.StoreFailed(errors.New("connection refused"), "storing"), "error"},
		{errors.New("blocked: but untyped"), "error"},
	} {
		if got := rejectReasons[rejectReason(c.err)]; got != c.want {
			t.Errorf("%q counted as %q, want %q", c.err, got, c.want)
		}
	}
}
