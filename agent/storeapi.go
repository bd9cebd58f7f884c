package agent

import (
	"context"
	"errors"
	"time"

	"github.com/snowclaw/snowclaw"

	"github.com/snowclaw/snowclaw/agent/memory"
)

// StoreItem writes a memory item someone asked for outside a chat (the
// HTTP API, an MCP tool): the same as "remember …" in a message, but with
// the tier, topic and scope given by the caller, whom the relay has
// already checked may write there. It is flushed before it returns, so
// the item's event is on the relay when the caller hears back.
func (a *Agent) StoreItem(ctx context.Context, it memory.Item) (memory.Item, error) {
	if a.closed.Load() {
		// not turned off: the relay is stopping, and the request succeeds
		// once it (or another instance) runs again
		return memory.Item{}, snowclaw.Unavailable("the agent is shutting down; try again in a few seconds")
	}
	for _, pk := range []string{it.Subject, it.Author} {
		if pk != "" && a.mem.Frozen(pk) {
			return memory.Item{}, snowclaw.Restricted("this person's memory is frozen; unfreeze it before storing new memories")
		}
	}
	// the same sanitizer as chat: a pasted nsec must not reach the relay
	it.Text = a.keys.Sanitize(it.Text).Text
	it.Detail = a.keys.Sanitize(it.Detail).Text
	it.Context = a.keys.Sanitize(it.Context).Text
	stored, _ := a.mem.Remember(it)
	if stored.ID == "" {
		why := it.Valid()
		if why == nil {
			why = errors.New("its person is not a valid public key")
		}
		return memory.Item{}, snowclaw.Invalid("the memory cannot be stored: %v", why)
	}
	d := ItemD(stored)
	err := a.flush(ctx)
	if refusedAs(err, d, snowclaw.ReasonBlocked) {
		// A forget blocks every version of the address created up to
		// its second; a version stamped in that same second passes
		// once the clock has moved on (the failed write is dirty again).
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(time.Now().Truncate(time.Second).Add(time.Second))):
			err = a.flush(ctx)
		}
	}
	if err != nil {
		if refusedAs(err, d, snowclaw.ReasonBlocked) {
			// refused for good: kept, it would be retried forever
			a.mem.Erase(func(x memory.Item) bool { return x.ID == stored.ID })
			return memory.Item{}, snowclaw.Blocked("the relay refuses this memory (it was erased at its person's request)")
		}
		return stored, snowclaw.Internal("kept in the agent's memory but not yet on the relay (retried on the next flush): %v", err)
	}
	a.log.Info("memory item stored through the API", "id", stored.ID, "tier", stored.Tier)
	return stored, nil
}
