package agent

import (
	"errors"
	"fmt"
	"testing"

	"github.com/snowclaw/snowclaw"
)

// TestRefusedAs: StoreItem decides whether the relay refused its item
// for good from the typed refusal of that one record inside a flush's
// joined error, never from the error's text.
func TestRefusedAs(t *testing.T) {
	blocked := &publishError{d: "snow:item:a", err: snowclaw.Blocked("erased")}
	other := &publishError{d: "snow:item:b", err: snowclaw.Blocked("erased")}
	limited := &publishError{d: "snow:item:a", err: snowclaw.RateLimited("slow down")}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"no error", nil, false},
		{"the item blocked", blocked, true},
		{"the item blocked among others", errors.Join(other, blocked, errors.New("x")), true},
		{"another record blocked", errors.Join(other), false},
		{"the item refused for another reason", limited, false},
		{"untyped text that looks like it", errors.New("publishing snow:item:a: blocked: erased"), false},
		{"wrapped once more", fmt.Errorf("flush: %w", errors.Join(blocked)), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := refusedAs(tc.err, "snow:item:a", snowclaw.ReasonBlocked); got != tc.want {
				t.Fatalf("refusedAs(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
