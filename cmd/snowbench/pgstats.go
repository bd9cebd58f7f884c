package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgServer is the PostgreSQL server a cluster run measures: its CPU (from
// /proc, when it runs on this machine), its WAL flushes (pg_stat_wal) and
// what its backends wait on (pg_stat_activity).
type pgServer struct {
	admin      string
	postmaster int // 0 when the server is not on this machine (or not readable)
}

// openServer finds the server's postmaster from its data directory's
// postmaster.pid, which only a server on this machine lets us read.
func openServer(ctx context.Context, admin string) (*pgServer, error) {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return nil, fmt.Errorf("connecting to --postgres: %w", err)
	}
	defer conn.Close(ctx)
	s := &pgServer{admin: admin}
	var dir string
	if err := conn.QueryRow(ctx, "SELECT setting FROM pg_settings WHERE name = 'data_directory'").Scan(&dir); err == nil {
		if raw, err := os.ReadFile(filepath.Join(dir, "postmaster.pid")); err == nil {
			first, _, _ := strings.Cut(string(raw), "\n")
			s.postmaster, _ = strconv.Atoi(strings.TrimSpace(first))
		}
	}
	return s, nil
}

// cpu is the CPU the server has used: the postmaster's own and that of
// every child it has reaped (cutime, cstime), plus every live child's.
// ok false when the server is not on this machine.
func (s *pgServer) cpu() (time.Duration, bool) {
	if s.postmaster == 0 {
		return 0, false
	}
	f, err := statFields(s.postmaster)
	if err != nil {
		return 0, false
	}
	ticks := f.num(11) + f.num(12) + f.num(13) + f.num(14)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == s.postmaster {
			continue
		}
		cf, err := statFields(pid)
		if err != nil || cf.num(1) != int64(s.postmaster) {
			continue
		}
		ticks += cf.num(11) + cf.num(12)
	}
	return time.Duration(ticks) * (time.Second / 100), true
}

// fields are /proc/<pid>/stat's fields after the command: fields[0] is
// field 3 (state), fields[1] the parent, fields[11..14] utime, stime,
// cutime, cstime.
type fields []string

func (f fields) num(i int) int64 {
	if i >= len(f) {
		return 0
	}
	n, _ := strconv.ParseInt(f[i], 10, 64)
	return n
}

func statFields(pid int) (fields, error) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil, err
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, errors.New("unreadable /proc stat")
	}
	return strings.Fields(s[i+1:]), nil
}

// walStats is what pg_stat_wal (PostgreSQL 14+) has counted: WAL
// flushes, their time (ms; 0 unless track_wal_io_timing is on) and WAL
// bytes.
type walStats struct {
	syncs  int64
	syncMS float64
	bytes  float64
}

// wal reads pg_stat_wal. Its counters reach the view when a backend
// flushes its statistics (at the latest some seconds after it goes
// idle), so it waits until two reads a second apart agree.
func (s *pgServer) wal(ctx context.Context) (walStats, error) {
	conn, err := pgx.Connect(ctx, s.admin)
	if err != nil {
		return walStats{}, err
	}
	defer conn.Close(ctx)
	last := walStats{syncs: -1}
	for range 15 {
		var w walStats
		if err := conn.QueryRow(ctx, "SELECT wal_sync, wal_sync_time, wal_bytes::float8 FROM pg_stat_wal").Scan(&w.syncs, &w.syncMS, &w.bytes); err != nil {
			return walStats{}, err
		}
		if w == last {
			return w, nil
		}
		last = w
		select {
		case <-ctx.Done():
			return walStats{}, ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return last, nil
}

// waitSampler counts, every 20 ms, the active backends of one
// database, those of them waiting on a heavyweight lock (wait_event_type
// Lock: row locks, advisory locks, the commit-time NOTIFY lock) and
// those waiting for the WAL to be written or flushed (their own flush,
// or another backend's that will cover their commit: group commit).
type waitSampler struct {
	stop context.CancelFunc
	done sync.WaitGroup

	active, lock, wal int64
	cpu               time.Duration // the sampling backend's own CPU, not the relays'
	err               error
}

func (s *pgServer) sampleWaits(ctx context.Context, db string) *waitSampler {
	ctx, cancel := context.WithCancel(ctx)
	w := &waitSampler{stop: cancel}
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		conn, err := pgx.Connect(ctx, s.admin)
		if err != nil {
			w.err = err
			return
		}
		defer conn.Close(context.Background())
		var pid int
		if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			w.err = err
			return
		}
		backendCPU := func() time.Duration {
			f, err := statFields(pid)
			if err != nil {
				return 0
			}
			return time.Duration(f.num(11)+f.num(12)) * (time.Second / 100)
		}
		cpu0 := backendCPU()
		defer func() { w.cpu = backendCPU() - cpu0 }()
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			var active, lock, wal int64
			err := conn.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE wait_event_type = 'Lock'),
					count(*) FILTER (WHERE wait_event IN ('WALSync', 'WALWrite', 'WALInsert', 'WALBufMapping'))
				FROM pg_stat_activity WHERE datname = $1 AND state = 'active' AND pid <> pg_backend_pid()`, db).Scan(&active, &lock, &wal)
			if err != nil {
				if ctx.Err() == nil {
					w.err = err
				}
				return
			}
			w.active += active
			w.lock += lock
			w.wal += wal
		}
	}()
	return w
}

// shares stops sampling and returns the share of active samples waiting
// on a heavyweight lock and for the WAL.
func (w *waitSampler) shares() (lock, wal float64, err error) {
	w.stop()
	w.done.Wait()
	if w.active == 0 {
		return 0, 0, w.err
	}
	return float64(w.lock) / float64(w.active), float64(w.wal) / float64(w.active), w.err
}

// dropDatabase drops a database freshDatabase made, closing whatever
// connections still use it.
func dropDatabase(ctx context.Context, admin, name string) error {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	return err
}

// loadAverage is /proc/loadavg's 1-minute figure ("?" when unreadable).
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "?"
	}
	return f[0] + " " + f[1] + " " + f[2]
}
