package relay

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/snowclaw/snowclaw"
)

// ErrDiskFull matches (errors.Is) a write refused because the data
// volume is nearly full.
var ErrDiskFull = errors.New("error: disk full")

// diskFullError is the refusal a client sees, OK false or HTTP 507.
type diskFullError struct{ free, reserve uint64 }

func (e *diskFullError) Error() string {
	return fmt.Sprintf("error: disk full: the relay has %d MiB of disk left, below its reserve of %d MiB; nothing was stored, try again later",
		e.free>>20, e.reserve>>20)
}

func (e *diskFullError) Is(target error) bool { return target == ErrDiskFull }

// ErrorReason: "error:" to websocket clients, 507 over HTTP.
func (e *diskFullError) ErrorReason() snowclaw.Reason { return snowclaw.ReasonDiskFull }

// maxMinFreeMB keeps the reserve in bytes inside a uint64 (a petabyte).
const maxMinFreeMB = 1 << 30

// diskGuard refuses writes before the store's volume runs out. Badger
// writes through mmap, and on a full disk the kernel answers a write to
// a mapped page with SIGBUS, which no Go code can recover from: the only
// safe write is one refused in time. Free space is measured at most once
// per interval (one statfs), so the write path pays an atomic load; the
// reserve has to hold what arrives within an interval plus badger's
// compactions. Space that comes back is noticed at the next measurement.
type diskGuard struct {
	dir      string
	interval time.Duration
	probe    func(dir string) (uint64, error)
	log      *slog.Logger

	reserve atomic.Uint64 // bytes; 0 = off
	next    atomic.Int64  // unix nanoseconds of the next measurement
	full    atomic.Bool
	free    atomic.Uint64

	mu       sync.Mutex // one measurement at a time
	probeErr bool       // the probe's failure was logged
}

func newDiskGuard(dir string, minFreeMB int, log *slog.Logger) *diskGuard {
	g := &diskGuard{dir: dir, interval: time.Second, probe: freeSpace, log: log}
	g.setReserve(minFreeMB)
	g.check() // a volume already full is reported at start
	return g
}

// setReserve changes the reserve; the next write measures again.
func (g *diskGuard) setReserve(minFreeMB int) {
	g.reserve.Store(uint64(min(max(minFreeMB, 0), maxMinFreeMB)) << 20)
	g.next.Store(0)
}

// check is nil when a write may go ahead, else a diskFullError.
func (g *diskGuard) check() error {
	reserve := g.reserve.Load()
	if reserve == 0 {
		return nil
	}
	// writers arriving during a measurement go by the last one
	if now := time.Now().UnixNano(); now >= g.next.Load() && g.mu.TryLock() {
		g.measure(reserve, now)
		g.mu.Unlock()
	}
	if g.full.Load() {
		return &diskFullError{free: g.free.Load(), reserve: reserve}
	}
	return nil
}

// isFull reports the last measurement, for health reports.
func (g *diskGuard) isFull() bool { return g.reserve.Load() != 0 && g.full.Load() }

// DiskStatus is the data volume's space as the owner's status report
// shows it (GET /api/v1/status).
type DiskStatus struct {
	FreeBytes    uint64 `json:"free_bytes"`
	ReserveBytes uint64 `json:"reserve_bytes"` // 0: writes are not guarded
	Full         bool   `json:"full"`          // new events are being refused
	Error        string `json:"error,omitempty"`
}

// status measures the volume now, apart from the guard's own schedule: the
// report must show the space of this moment even when the guard is off
// (no reserve), and it does not move the guard's next measurement.
func (g *diskGuard) status() DiskStatus {
	st := DiskStatus{ReserveBytes: g.reserve.Load(), Full: g.isFull()}
	free, err := g.probe(g.dir)
	if err != nil {
		st.Error = err.Error()
		return st
	}
	st.FreeBytes = free
	return st
}

func (g *diskGuard) measure(reserve uint64, now int64) {
	g.next.Store(now + int64(g.interval))
	free, err := g.probe(g.dir)
	if err != nil {
		// unmeasurable is not full: refusing every write on a probe
		// failure would turn a monitoring gap into an outage
		if !g.probeErr {
			g.log.Warn("cannot measure free disk space; writes are not guarded against a full disk", "dir", g.dir, "err", err)
			g.probeErr = true
		}
		g.full.Store(false)
		return
	}
	g.probeErr = false
	g.free.Store(free)
	full := free < reserve
	if g.full.Swap(full) == full {
		return
	}
	if full {
		g.log.Warn("disk nearly full: refusing new events with \"error: disk full\" until space is freed",
			"dir", g.dir, "free_mib", free>>20, "reserve_mib", reserve>>20)
	} else {
		g.log.Warn("disk space is back above the reserve: accepting new events again",
			"dir", g.dir, "free_mib", free>>20, "reserve_mib", reserve>>20)
	}
}

// SetMinFreeMB changes the disk reserve of a running relay (the config's
// store.min_free_mb): a test puts it above the real free space to see a
// full disk, and back.
func (r *Relay) SetMinFreeMB(mb int) { r.disk.setReserve(mb) }
