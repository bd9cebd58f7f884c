package memory

import (
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// clock is a settable time source for deterministic timestamps.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock(unix int64) *clock { return &clock{t: time.Unix(unix, 0)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// keypair is a fresh secret and its pubkey.
func keypair(t *testing.T) (sk, pk string) {
	t.Helper()
	sk = nostr.GeneratePrivateKey()
	pk, err := nostr.GetPublicKey(sk)
	if err != nil {
		t.Fatal(err)
	}
	return sk, pk
}

func newTestStore(t *testing.T, o Options) (*Store, *clock) {
	t.Helper()
	c := newClock(1_700_000_000)
	o.Now = c.Now
	return NewStore(o), c
}
