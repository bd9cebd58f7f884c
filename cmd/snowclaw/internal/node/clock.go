package node

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/snowclaw/snowclaw/relay/clock"
	"github.com/snowclaw/snowclaw/relay/store/postgres"
)

// clockSyncEvery is how often an instance reads the shared store's clock:
// often enough that a clock stepped by NTP, or a VM resumed, is corrected
// within seconds; each reading is one short query.
const clockSyncEvery = 5 * time.Second

// startClock makes the node's clock the cluster's (relay/clock): over a
// shared store, its own clock (o.Clock) corrected by its offset from the
// store's, read once now and then every clockSyncEvery; alone on its
// store, its own clock. Every time-dependent path reads n.o.Clock.
func (n *Node) startClock(ctx context.Context) {
	var src clock.Source
	if pg, ok := n.store.Unwrap().(*postgres.Store); ok {
		src = pg
	}
	n.clock = clock.New(n.o.Clock, src, n.o.MaxClockError, n.o.Logger)
	if src == nil {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	if err := n.clock.Sync(sctx); err != nil {
		n.o.Logger.Warn("reading the shared store's clock; writes wait for it", "err", err)
	}
	cancel()
	n.o.Clock = n.clock.Now
	n.o.ClockCheck = n.clock.Check
	rctx, stop := context.WithCancel(context.Background())
	n.stopClock = stop
	n.clockDone = make(chan struct{})
	go func() {
		defer close(n.clockDone)
		n.clock.Run(rctx, clockSyncEvery)
	}()
}

// registerClockMetrics adds the clock's offset to the relay's metrics.
func (n *Node) registerClockMetrics() {
	if n.stopClock == nil {
		return
	}
	n.relay.Metrics().MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "snowclaw_clock_offset_seconds",
		Help: "The shared store's clock minus this instance's; the instance dates and judges by the store's.",
	}, func() float64 { off, _, _ := n.clock.Offset(); return off.Seconds() }))
}

func (n *Node) closeClock() {
	if n.stopClock != nil {
		n.stopClock()
		<-n.clockDone
	}
}
