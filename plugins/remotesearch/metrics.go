package remotesearch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the remote layer's series on /metrics. The remote label is
// a configured URL, so its values are bounded by the config.
type metrics struct {
	requests *prometheus.CounterVec   // remote, result: ok, timeout, error, skipped
	dropped  *prometheus.CounterVec   // remote, reason: id, signature, scope, filter
	cache    *prometheus.CounterVec   // result: hit, miss
	seconds  *prometheus.HistogramVec // remote
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "snowclaw_remote_requests_total",
			Help: "Requests to remote relays by result: ok, timeout, error, or skipped (the remote failed recently and is resting).",
		}, []string{"remote", "result"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "snowclaw_remote_events_dropped_total",
			Help: "Events remote relays sent that were dropped: bad id, bad signature, not a public memory (scope), or outside the request (filter).",
		}, []string{"remote", "reason"}),
		cache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "snowclaw_remote_cache_total",
			Help: "Remote answers served from the in-RAM cache (hit) or asked of the remote (miss).",
		}, []string{"result"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "snowclaw_remote_request_seconds",
			Help:    "Time of one request to a remote relay, NIP-11 included, failures included.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"remote"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.requests, m.dropped, m.cache, m.seconds} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("remotesearch: metrics: %w", err)
			}
		}
	}
	return m, nil
}

func (m *metrics) result(remote string, err error, took time.Duration) {
	m.seconds.WithLabelValues(remote).Observe(took.Seconds())
	switch {
	case err == nil:
		m.requests.WithLabelValues(remote, "ok").Inc()
	case errors.Is(err, context.DeadlineExceeded):
		m.requests.WithLabelValues(remote, "timeout").Inc()
	default:
		m.requests.WithLabelValues(remote, "error").Inc()
	}
}
