package relay

import "errors"

// Held is a rule's answer for an event that is kept but not granted: the
// event is stored and passes every saved hook like an accepted one, and
// the client is answered with reason (OK false). A join request that
// waits for a group's moderators is one (NIP-29 lets the relay "defer
// that decision to an administrator"): they must be able to read it, and
// its author must learn it is pending, not accepted.
func Held(reason error) error { return &heldError{reason} }

type heldError struct{ reason error }

func (h *heldError) Error() string { return h.reason.Error() }
func (h *heldError) Unwrap() error { return h.reason }

// HeldReason is the reason of a Held answer, or nil for any other error.
func HeldReason(err error) error {
	var h *heldError
	if errors.As(err, &h) {
		return h.reason
	}
	return nil
}
