// Package memlimit sets the process's soft memory limit
// (debug.SetMemoryLimit) from relay.memory_limit_mb, GOMEMLIMIT or the
// container's cgroup limit.
package memlimit

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// The relay's heap grows with its store (about 2 KB per memory: docs,
// postings, the vector graph). Go's collector lets the heap reach twice
// what is live before it runs (GOGC=100), so a relay with 1.5 GB of live
// index peaks near 3 GB. A soft memory limit (debug.SetMemoryLimit) makes
// the collector run earlier as the heap nears the limit, which keeps the
// peak near the live heap instead of twice it, at the price of more
// collection work when memory is tight. It is soft: a live heap above it
// is not refused, only collected more often.

// Auto and Off are the special values of relay.memory_limit_mb.
const (
	Auto = 0
	Off  = -1
)

// cgroupShare of a container's memory limit becomes the soft limit when
// memory_limit_mb is automatic: the rest is for what the collector does
// not manage (goroutine stacks, badger's mapped tables, the page cache the
// cgroup also counts).
const cgroupShare = 0.9

// cgroupLimitFiles are where a process sees its container's memory limit:
// cgroup v2's memory.max, then cgroup v1's memory.limit_in_bytes. Inside
// a container the process's own cgroup is mounted there.
var cgroupLimitFiles = []string{
	"/sys/fs/cgroup/memory.max",
	"/sys/fs/cgroup/memory/memory.limit_in_bytes",
}

// limit is the soft limit decided for the process, and why.
type limit struct {
	Bytes  int64  // 0: none set by us
	Source string // "GOMEMLIMIT", "config", "cgroup", "off", "none"
}

// decide picks the soft memory limit: GOMEMLIMIT in the
// environment always wins (the runtime has applied it already); else
// memory_limit_mb when positive; else, when automatic, cgroupShare of the
// container's limit if there is one; else none. readFile is os.ReadFile
// (tests pass their own).
func decide(mb int, getenv func(string) string, readFile func(string) ([]byte, error)) (limit, error) {
	if getenv("GOMEMLIMIT") != "" {
		return limit{Source: "GOMEMLIMIT"}, nil
	}
	switch {
	case mb == Off:
		return limit{Source: "off"}, nil
	case mb > 0:
		return limit{Bytes: int64(mb) << 20, Source: "config"}, nil
	case mb != Auto:
		return limit{}, fmt.Errorf("relay.memory_limit_mb: %d is neither -1 (off), 0 (automatic) nor a size in MiB", mb)
	}
	for _, path := range cgroupLimitFiles {
		b, err := readFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return limit{}, fmt.Errorf("reading the container's memory limit: %w", err)
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return limit{Source: "none"}, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return limit{}, fmt.Errorf("reading the container's memory limit: %s holds %q", path, s)
		}
		// cgroup v1 writes "no limit" as a huge page-rounded number
		if n >= math.MaxInt64/2 {
			return limit{Source: "none"}, nil
		}
		return limit{Bytes: int64(float64(n) * cgroupShare), Source: "cgroup"}, nil
	}
	return limit{Source: "none"}, nil
}

// Apply decides the limit for memory_limit_mb mb, sets it and returns
// the limit the runtime now has (math.MaxInt64: none) and where it came
// from.
func Apply(mb int) (int64, string, error) {
	l, err := decide(mb, os.Getenv, os.ReadFile)
	if err != nil {
		return 0, "", err
	}
	if l.Bytes > 0 {
		debug.SetMemoryLimit(l.Bytes)
	}
	return debug.SetMemoryLimit(-1), l.Source, nil // -1 reads it
}

// String is a limit for the log: MiB, or "none".
func String(b int64) string {
	if b == math.MaxInt64 {
		return "none"
	}
	return strconv.FormatInt(b>>20, 10) + " MiB"
}
