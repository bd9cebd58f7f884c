package wsclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// The *Again methods keep the relay's "try again" contract as a patient
// client does: a refusal snowclaw.Retryable reads as retryable (an
// instance behind the shared store, an index loading) is sent again after
// a backoff, until ctx ends; any other answer is returned as it came. The
// backoff starts at againFirst and doubles up to againMax, so a relay
// that needs a second is asked a handful of times, not hammered.
const (
	againFirst = 25 * time.Millisecond
	againMax   = time.Second
	// waitOne bounds one try when ctx has no deadline
	waitOne = 5 * time.Second
)

// again runs try until it returns a reason that is not retryable (""
// being an answer too) or an error, or ctx ends; then the last reason is
// returned, wrapped in ErrGaveUp when ctx ended on a retryable one.
func again(ctx context.Context, try func(timeout time.Duration) (reason string, err error)) (string, error) {
	pause := againFirst
	for {
		timeout := waitOne
		if d, ok := ctx.Deadline(); ok {
			timeout = time.Until(d)
		}
		reason, err := try(timeout)
		if err != nil || !snowclaw.Retryable(reason) {
			return reason, err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return reason, fmt.Errorf("%w: the relay still answers %q", ErrGaveUp, reason)
		case <-t.C:
		}
		pause = min(2*pause, againMax)
	}
}

// ErrGaveUp: ctx ended while the relay still asked to try again.
var ErrGaveUp = errors.New("gave up retrying")

// PublishAgain is Publish, sent again while the refusal is retryable.
func (c *Client) PublishAgain(ctx context.Context, evt nostr.Event) error {
	_, err := again(ctx, func(time.Duration) (string, error) {
		err := c.Publish(ctx, evt)
		if r, ok := errors.AsType[*Refused](err); ok {
			if snowclaw.Retryable(r.Reason) {
				return r.Reason, nil
			}
		}
		return "", err
	})
	return err
}

// FetchAgain is Fetch, asked again while it is CLOSED with a retryable
// reason.
func (c *Client) FetchAgain(ctx context.Context, f nostr.Filter) ([]*nostr.Event, string, error) {
	var evs []*nostr.Event
	closed, err := again(ctx, func(timeout time.Duration) (string, error) {
		var (
			closed string
			err    error
		)
		evs, closed, err = c.Fetch(f, timeout)
		return closed, err
	})
	return evs, closed, err
}

// CountAgain is Count, asked again while it is CLOSED with a retryable
// reason.
func (c *Client) CountAgain(ctx context.Context, f nostr.Filter) (int64, string, error) {
	var n int64
	closed, err := again(ctx, func(timeout time.Duration) (string, error) {
		var (
			closed string
			err    error
		)
		n, closed, err = c.Count(f, timeout)
		return closed, err
	})
	return n, closed, err
}

// SubscribeAgain opens the live subscription sub for f and waits for its
// EOSE; a CLOSED with a retryable reason is subscribed again under the
// same id. It returns the CLOSED reason of a refusal, "" once the
// subscription is live.
func (c *Client) SubscribeAgain(ctx context.Context, sub string, f nostr.Filter) (string, error) {
	return again(ctx, func(timeout time.Duration) (string, error) {
		from := c.mark()
		if err := c.Send("REQ", sub, f); err != nil {
			return "", err
		}
		arr, ok := c.waitAny(from, sub, timeout, "EOSE", "CLOSED")
		if !ok {
			return "", fmt.Errorf("REQ %s: neither EOSE nor CLOSED within %s", sub, timeout)
		}
		var label, reason string
		json.Unmarshal(arr[0], &label)
		if label == "CLOSED" && len(arr) > 2 {
			json.Unmarshal(arr[2], &reason)
		}
		return reason, nil
	})
}
