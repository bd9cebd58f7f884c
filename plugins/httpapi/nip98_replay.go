package httpapi

import (
	"sync"
	"time"

	"github.com/snowclaw/snowclaw"
)

// maxReplayIDs bounds the NIP-98 replay cache. Every entry leaves within
// two windows of its created_at, so only a flood of fresh signed headers
// fills it; then new headers are refused (fail closed) rather than old
// ids forgotten, which would let a captured header through again.
const maxReplayIDs = 1 << 16

var (
	errReplayed    = snowclaw.AuthRequired("this Authorization header was already used; sign a new one for each request (NIP-98)")
	errReplaysFull = snowclaw.RateLimited("too many NIP-98 authorizations in the last two minutes; retry shortly")
)

// replayCache holds the ids of NIP-98 events already accepted, each
// until its created_at falls out of nip98Window and the time check
// refuses it anyway. The zero value is ready.
type replayCache struct {
	mu    sync.Mutex
	until map[string]time.Time
	swept time.Time
}

// use records id, refusing one already recorded.
func (c *replayCache) use(id string, created, now time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.until == nil {
		c.until = make(map[string]time.Time)
	}
	if exp, ok := c.until[id]; ok && now.Before(exp) {
		return errReplayed
	}
	// sweep at most once a second: a full cache under a flood refuses
	// cheaply instead of rescanning on every request
	if now.Sub(c.swept) >= time.Minute || len(c.until) >= maxReplayIDs && now.Sub(c.swept) >= time.Second {
		for k, exp := range c.until {
			if !now.Before(exp) {
				delete(c.until, k)
			}
		}
		c.swept = now
	}
	if len(c.until) >= maxReplayIDs {
		return errReplaysFull
	}
	c.until[id] = created.Add(nip98Window + time.Second)
	return nil
}
