package rights

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/snowclaw/snowclaw"
)

// DefaultConfirmTTL is how long a confirmation token stays valid when
// NewConfirmations is given no ttl: long enough to read the preview, short
// enough that a forgotten token is not a standing licence to erase.
const DefaultConfirmTTL = 10 * time.Minute

// Errors of Take; wrapped with a message that says what to do next.
var (
	ErrTokenUnknown  = errors.New("unknown confirmation token")
	ErrTokenNotYours = errors.New("confirmation token was not issued to you")
	ErrTokenWrongOp  = errors.New("confirmation token is for another operation")
	ErrTokenExpired  = errors.New("confirmation token has expired")
)

// Pending is an operation waiting for its confirmation: the irreversible
// ones (destroy, forget by query) are previewed first and run only when
// the person sends the token back (docs/privacy.md). IDs fixes what was previewed, so the confirmed
// operation removes exactly what the person saw, not what a query matches
// by the time they answer.
type Pending struct {
	Token    string    `json:"token"`
	Subject  string    `json:"subject"` // hex pubkey of the person
	Op       string    `json:"op"`
	Selector Selector  `json:"selector"`
	IDs      []string  `json:"ids,omitempty"`
	Expires  time.Time `json:"expires"`
}

// Confirmations holds the pending operations in memory; a restart cancels
// them all, which errs on the side of not erasing. Safe for concurrent use.
type Confirmations struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	byToken map[string]*Pending
	byKey   map[string]string // subject+op → token
}

// NewConfirmations makes the store; ttl ≤ 0 means DefaultConfirmTTL and a
// nil now means time.Now.
func NewConfirmations(ttl time.Duration, now func() time.Time) *Confirmations {
	if ttl <= 0 {
		ttl = DefaultConfirmTTL
	}
	if now == nil {
		now = time.Now
	}
	return &Confirmations{ttl: ttl, now: now, byToken: map[string]*Pending{}, byKey: map[string]string{}}
}

// Issue stores p under a fresh random token (16 hex characters) valid for
// the ttl, replacing, and so invalidating, any earlier pending operation of
// the same subject and op: only the latest preview can be confirmed.
func (c *Confirmations) Issue(p Pending) Pending {
	p.Subject = normalizeSubject(p.Subject)
	p.IDs = slices.Clone(p.IDs)
	p.Selector = cloneSelector(p.Selector)
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	c.pruneLocked(now)
	key := p.Subject + "\x00" + p.Op
	if old, ok := c.byKey[key]; ok {
		delete(c.byToken, old)
	}
	p.Token = randomHex(8)
	for c.byToken[p.Token] != nil { // 64 bits: a clash is theoretical, but cheap to rule out
		p.Token = randomHex(8)
	}
	p.Expires = now.Add(c.ttl)
	stored := p
	c.byToken[p.Token] = &stored
	c.byKey[key] = p.Token
	return clonePending(p)
}

// Take returns the pending operation of token and removes it, so a token
// confirms once. The token must have been issued to subject for op and not
// have expired. A token of someone else is refused without saying whose it
// is or what it was for, and stays valid for its owner.
func (c *Confirmations) Take(subject, op, token string) (Pending, error) {
	subject = normalizeSubject(subject)
	token = strings.ToLower(strings.TrimSpace(token))
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.byToken[token]
	switch {
	case !ok:
		return Pending{}, fmt.Errorf("%w: ask again for a new one", ErrTokenUnknown)
	case p.Subject != subject:
		return Pending{}, ErrTokenNotYours
	case !c.now().Before(p.Expires):
		c.removeLocked(p)
		return Pending{}, fmt.Errorf("%w (at %s): ask again for a new one", ErrTokenExpired, p.Expires.UTC().Format(time.RFC3339))
	case p.Op != op:
		return Pending{}, fmt.Errorf("%w: it confirms %s, not %s", ErrTokenWrongOp, p.Op, op)
	}
	c.removeLocked(p)
	return clonePending(*p), nil
}

func (c *Confirmations) removeLocked(p *Pending) {
	delete(c.byToken, p.Token)
	key := p.Subject + "\x00" + p.Op
	if c.byKey[key] == p.Token {
		delete(c.byKey, key)
	}
}

// pruneLocked drops expired entries so that previews nobody confirms do not
// pile up.
func (c *Confirmations) pruneLocked(now time.Time) {
	for _, p := range c.byToken {
		if !now.Before(p.Expires) {
			c.removeLocked(p)
		}
	}
}

func normalizeSubject(s string) string {
	s = strings.TrimSpace(s)
	if pk, err := snowclaw.ParsePubkey(s); err == nil {
		return pk
	}
	return strings.ToLower(s)
}

func clonePending(p Pending) Pending {
	p.IDs = slices.Clone(p.IDs)
	p.Selector = cloneSelector(p.Selector)
	return p
}

func cloneSelector(s Selector) Selector {
	s.IDs = slices.Clone(s.IDs)
	s.Tags = slices.Clone(s.Tags)
	return s
}
