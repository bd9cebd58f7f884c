package policies

import (
	"context"
	"sync"
	"time"

	"github.com/snowclaw/snowclaw"
	"golang.org/x/time/rate"
)

// Rate is a token bucket: PerSecond tokens refill each second up to Burst.
// A zero PerSecond disables the limit.
type Rate struct {
	PerSecond float64
	Burst     int
}

// limiter is a set of token buckets (golang.org/x/time/rate) keyed by IP
// or pubkey. A bucket that has refilled to its burst is the same as a new
// one, so the periodic sweep drops those: a stream of new keys cannot grow
// the set forever.
type limiter struct {
	rate    Rate
	mu      sync.Mutex
	buckets map[string]*rate.Limiter
	swept   time.Time
}

func newLimiter(r Rate) *limiter {
	return &limiter{rate: r, buckets: make(map[string]*rate.Limiter), swept: time.Now()}
}

// allow takes a token from key's bucket at now; a refusal takes none.
func (l *limiter) allow(key string, now time.Time) bool {
	if l.rate.PerSecond <= 0 || key == "" {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) > time.Minute {
		for k, b := range l.buckets {
			if b.TokensAt(now) >= float64(l.rate.Burst) {
				delete(l.buckets, k)
			}
		}
		l.swept = now
	}
	b, ok := l.buckets[key]
	if !ok {
		b = rate.NewLimiter(rate.Limit(l.rate.PerSecond), l.rate.Burst)
		l.buckets[key] = b
	}
	return b.AllowN(now, 1)
}

// EventRateLimit limits events per client IP and per author. Events the
// relay makes itself (no connection in ctx) are never limited.
func EventRateLimit(perIP, perPubkey Rate, exempt func(pubkey string) bool) func(context.Context, *snowclaw.Event) error {
	ips, pks := newLimiter(perIP), newLimiter(perPubkey)
	return func(ctx context.Context, evt *snowclaw.Event) error {
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
