package relay

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// registerFeedMetrics adds the change log's lag to the relay's series
// (a shared store only): what an operator alerts on before reads and
// writes start being refused (caughtUp).
func (r *Relay) registerFeedMetrics() {
	behind := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "snowclaw_feed_refusals_total",
		Help: "Reads and writes refused because this instance could not apply the shared store's newer changes in time.",
	})
	again := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "snowclaw_feed_saves_decided_again_total",
		Help: "Saves decided without reading the shared store's change log first that the store refused, another instance's change having come meanwhile, and that were decided again.",
	})
	r.met.behind, r.met.again = behind, again
	if r.follow == nil {
		return
	}
	lag := func() FeedLag {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		l, _, _ := r.FeedLag(ctx)
		return l
	}
	r.met.reg.MustRegister(behind, again,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "snowclaw_feed_lag_entries",
			Help: "Entries of the shared store's change log not yet applied by this instance.",
		}, func() float64 { return float64(lag().Entries) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "snowclaw_feed_lag_seconds",
			Help: "How long ago the oldest change-log entry not yet applied by this instance was written (0 when none waits).",
		}, func() float64 { return lag().Seconds }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "snowclaw_feed_position",
			Help: "The last change-log entry this instance has applied.",
		}, func() float64 { return float64(r.FeedPosition()) }),
	)
}
