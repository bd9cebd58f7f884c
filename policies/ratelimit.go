package policies

import (
	"context"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// Rate is a token bucket: PerSecond tokens refill each second up to Burst.
// A zero PerSecond disables the limit.
type Rate struct {
	PerSecond float64
	Burst     int
}

type bucket struct {
	tokens float64
	last   time.Time
}

// limiter is a set of token buckets keyed by IP or pubkey. Buckets idle for
// long are swept so that a stream of new keys cannot grow it forever.
type limiter struct {
	rate    Rate
	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time
}

func newLimiter(r Rate) *limiter {
	return &limiter{rate: r, buckets: make(map[string]*bucket), swept: time.Now()}
}

func (l *limiter) allow(key string, now time.Time) bool {
	if l.rate.PerSecond <= 0 || key == "" {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) > time.Minute {
		full := float64(l.rate.Burst) / l.rate.PerSecond
		for k, b := range l.buckets {
			if now.Sub(b.last).Seconds() > full {
				delete(l.buckets, k)
			}
		}
		l.swept = now
	}
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{tokens: float64(l.rate.Burst), last: now}
		l.buckets[key] = b
	}
	b.tokens += now.Sub(b.last).Seconds() * l.rate.PerSecond
	if b.tokens > float64(l.rate.Burst) {
		b.tokens = float64(l.rate.Burst)
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// EventRateLimit limits events per client IP and per author. Events the
// relay makes itself (no connection in ctx) are never limited.
func EventRateLimit(perIP, perPubkey Rate, exempt func(pubkey string) bool) func(context.Context, *nostr.Event) error {
	ips, pks := newLimiter(perIP), newLimiter(perPubkey)
	return func(ctx context.Context, evt *nostr.Event) error {
		ip := ClientIP(ctx)
		if ip == "" || exempt(evt.PubKey) {
			return nil
		}
		now := time.Now()
		if !ips.allow(ip, now) {
			return snowclaw.RateLimited("more than %g events per second from your address; slow down", perIP.PerSecond)
		}
		if !pks.allow(evt.PubKey, now) {
			return snowclaw.RateLimited("more than %g events per second from your key; slow down", perPubkey.PerSecond)
		}
		return nil
	}
}

// FilterRateLimit limits REQ and COUNT filters per client IP.
func FilterRateLimit(perIP Rate) func(context.Context, snowclaw.Filter) error {
	ips := newLimiter(perIP)
	return func(ctx context.Context, _ snowclaw.Filter) error {
		if ip := ClientIP(ctx); ip != "" && !ips.allow(ip, time.Now()) {
			return snowclaw.RateLimited("more than %g queries per second from your address; slow down", perIP.PerSecond)
		}
		return nil
	}
}

// ConnectionRateLimit limits new websocket connections per client IP; it
// reports whether a connection from ip must be refused.
func ConnectionRateLimit(perIP Rate) func(ip string) bool {
	ips := newLimiter(perIP)
	return func(ip string) bool {
		return !ips.allow(ip, time.Now())
	}
}
