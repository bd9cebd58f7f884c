package relay

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/relay/store"
)

// ErrDiskFull matches (errors.Is) a write refused because the data
// volume is nearly full.
var ErrDiskFull = errors.New("error: disk full")

// diskFullError is the refusal a client sees, OK false or HTTP 507.
type diskFullError struct {
	free, reserve uint64
	readOnly      bool // the store was opened read-only at start
}

func (e *diskFullError) Error() string {
	if e.readOnly {
		return fmt.Sprintf("error: disk full: the relay started with %d MiB of disk left, below its reserve of %d MiB, and keeps its events read-only until space is freed; nothing was stored, try again later",
			e.free>>20, e.reserve>>20)
	}
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
// safe write is one refused in time. Free space is measured with one
// statfs, at most once per interval while there is room; every write let
// through counts as perWrite bytes until the next measurement, and once
// what was counted could have used the room above the reserve the next
// write measures again, so a flood cannot outrun the measurements. The
// reserve is never below what the store writes at once on its own
// (floor: store.MinFreeMB, badger's flushes and compactions), so the
// room left is always enough for the store's background work. Space
// that comes back is noticed at the next measurement.
type diskGuard struct {
	dir      string
	interval time.Duration
	probe    func(dir string) (uint64, error)
	log      *slog.Logger
	floor    uint64 // bytes the store may write at once; the reserve is at least this
	perWrite uint64 // bytes one accepted event may take on disk, at most
	readOnly bool   // the store was opened read-only: every write is refused

	reserve atomic.Uint64 // bytes; 0 = off
	next    atomic.Int64  // unix nanoseconds of the next measurement
	full    atomic.Bool
	free    atomic.Uint64
	pending atomic.Uint64 // bytes let through since the last measurement

	mu       sync.Mutex // one measurement at a time
	probeErr bool       // the probe's failure was logged
}

func newDiskGuard(opts Options, st *store.Exact) *diskGuard {
	event := opts.Limits.MaxEventBytes
	if event <= 0 {
		event = int(max(opts.MaxMessageBytes, 512<<10))
	}
	g := &diskGuard{dir: opts.DataDir, interval: time.Second, probe: store.FreeSpace, log: opts.Logger,
		floor:    uint64(store.MinFreeMB(st)) << 20,
		perWrite: 2*uint64(event) + 4<<10, // the event and its index keys, a page at least
		readOnly: store.ReadOnly(st),
	}
	g.setReserve(opts.MinFreeMB)
	g.check() // a volume already full is reported at start
	if g.readOnly {
		g.log.Warn("disk full at start: the event store is open read-only; reads are served, new events are refused with \"error: disk full\" until space is freed",
			"dir", g.dir, "free_mib", g.free.Load()>>20, "reserve_mib", g.reserveBytes()>>20)
	}
	return g
}

// setReserve changes the reserve; the next write measures again.
func (g *diskGuard) setReserve(minFreeMB int) {
	g.reserve.Store(uint64(min(max(minFreeMB, 0), maxMinFreeMB)) << 20)
	g.next.Store(0)
}

// reserveBytes is the reserve in force: the one set, raised to the
// store's floor; 0 when the guard is off.
func (g *diskGuard) reserveBytes() uint64 {
	r := g.reserve.Load()
	if r == 0 {
		return 0
	}
	return max(r, g.floor)
}

// check is nil when a write may go ahead, else a diskFullError.
func (g *diskGuard) check() error {
	reserve := g.reserveBytes()
	if reserve == 0 && !g.readOnly {
		return nil
	}
	// writers arriving during a measurement go by the last one
	now := time.Now().UnixNano()
	due := now >= g.next.Load() ||
		g.free.Load() < reserve+g.pending.Load()+g.perWrite // what was let through may have used the room
	if due && g.mu.TryLock() {
		g.measure(reserve, now)
		g.mu.Unlock()
	}
	if g.readOnly {
		return &diskFullError{free: g.free.Load(), reserve: reserve, readOnly: true}
	}
	if g.full.Load() {
		return &diskFullError{free: g.free.Load(), reserve: reserve}
	}
	g.pending.Add(g.perWrite)
	return nil
}

// isFull reports the last measurement, for health reports.
func (g *diskGuard) isFull() bool { return g.readOnly || g.reserveBytes() != 0 && g.full.Load() }

// DiskStatus is the data volume's space as the owner's status report
// shows it (GET /api/v1/status).
type DiskStatus struct {
	FreeBytes    uint64 `json:"free_bytes"`
	ReserveBytes uint64 `json:"reserve_bytes"` // 0: writes are not guarded
	Full         bool   `json:"full"`          // new events are being refused
	ReadOnly     bool   `json:"read_only"`     // the store was opened read-only on a full disk at start
	Error        string `json:"error,omitempty"`
}

// status measures the volume now, apart from the guard's own schedule: the
// report must show the space of this moment even when the guard is off
// (no reserve), and it does not move the guard's next measurement.
func (g *diskGuard) status() DiskStatus {
	st := DiskStatus{ReserveBytes: g.reserveBytes(), Full: g.isFull(), ReadOnly: g.readOnly}
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
	g.pending.Store(0)
	full := free < reserve
	if g.full.Swap(full) == full {
		return
	}
	if g.readOnly { // newDiskGuard said it at start
		if !full {
			g.log.Warn("disk space is back above the reserve; the event store stays read-only until it is opened again (snowclaw serve does it by itself)",
				"dir", g.dir, "free_mib", free>>20, "reserve_mib", reserve>>20)
		}
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
