// Package clock is the one clock of a cluster: instances sharing a store
// date and judge by the store's time, never by their own. Each instance
// measures its offset from the store (a reading of the store's clock
// between two of its own, so the error is at most half the round trip)
// and reads its own clock corrected by it. A store of one instance is its
// own clock: there the instance's clock is the clock.
package clock

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/snowclaw/snowclaw"
)

// Source is a clock every instance reads alike: the shared store's.
type Source interface {
	StoreTime(ctx context.Context) (time.Time, error)
}

// samples is how many readings one Sync takes; the one with the shortest
// round trip is kept, which bounds the error best.
const samples = 3

// warnAbove is the offset past which an instance says in its log that
// its own clock is off (it is corrected, but the operator should know).
const warnAbove = time.Second

// Clock is an instance's reading of the cluster's time.
type Clock struct {
	local func() time.Time
	src   Source
	bound time.Duration
	log   *slog.Logger

	mu     sync.Mutex
	offset time.Duration // the store's time minus this instance's
	error  time.Duration // half the round trip of the reading kept
	synced bool
	warned bool
}

// New is a clock reading local corrected by its offset from src; nil src
// is local itself. bound is the largest error (half a round trip) the
// clock decides with (Check); 0 is one second.
func New(local func() time.Time, src Source, bound time.Duration, log *slog.Logger) *Clock {
	if local == nil {
		local = time.Now
	}
	if bound <= 0 {
		bound = time.Second
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Clock{local: local, src: src, bound: bound, log: log.With("component", "clock"), synced: src == nil}
}

// Now is the cluster's time as this instance knows it.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	off := c.offset
	c.mu.Unlock()
	return c.local().Add(off)
}

// Offset is the store's time minus this instance's, the error of that
// estimate, and whether there is one yet.
func (c *Clock) Offset() (offset, error time.Duration, synced bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offset, c.error, c.synced
}

// Check is nil when the clock may be decided by: a store of one, or an
// offset measured within the bound. Otherwise a refusal that asks the
// client to try again: a decision dated by a clock that may be wrong by
// more than the bound (an expiry, a late publication, a NIP-98 window)
// could be the wrong one.
func (c *Clock) Check() error {
	off, e, ok := c.Offset()
	switch {
	case !ok:
		return snowclaw.Internal("this relay instance has not yet read the shared store's clock; try again in a few seconds")
	case e > c.bound:
		return snowclaw.Internal("this relay instance knows the shared store's clock only to within %s (offset %s); try again in a few seconds", e.Round(time.Millisecond), off.Round(time.Millisecond))
	}
	return nil
}

// Sync reads the store's clock and updates the offset; an error leaves
// the last estimate in place.
func (c *Clock) Sync(ctx context.Context) error {
	if c.src == nil {
		return nil
	}
	var best struct {
		offset, error time.Duration
		ok            bool
	}
	var lastErr error
	for range samples {
		t0 := c.local()
		st, err := c.src.StoreTime(ctx)
		t1 := c.local()
		if err != nil {
			lastErr = err
			continue
		}
		rtt := t1.Sub(t0)
		if rtt < 0 {
			continue // the local clock stepped back mid-reading
		}
		off := st.Sub(t0.Add(rtt / 2))
		if !best.ok || rtt/2 < best.error {
			best.offset, best.error, best.ok = off, rtt/2, true
		}
	}
	if !best.ok {
		return lastErr
	}
	c.mu.Lock()
	c.offset, c.error, c.synced = best.offset, best.error, true
	warn := best.offset.Abs() > warnAbove
	changed := warn != c.warned
	c.warned = warn
	c.mu.Unlock()
	switch {
	case changed && warn:
		c.log.Warn("this instance's clock is off from the shared store's; it dates and judges by the store's time, but check its time sync (NTP)",
			"offset", best.offset.Round(time.Millisecond), "error", best.error.Round(time.Millisecond))
	case changed:
		c.log.Info("this instance's clock is back within a second of the shared store's", "offset", best.offset.Round(time.Millisecond))
	}
	return nil
}

// Run syncs every interval until ctx ends.
func (c *Clock) Run(ctx context.Context, every time.Duration) {
	if c.src == nil {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := c.Sync(ctx); err != nil && ctx.Err() == nil {
				c.log.Warn("reading the shared store's clock", "err", err)
			}
		}
	}
}
