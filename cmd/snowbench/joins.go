package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/relay"
)

// joinsStage is one step of a flood: the group grown to size members.
type joinsStage struct {
	size     int
	joinsPS  float64
	cpuPerUS float64 // relay CPU per join, µs, every instance summed
}

// joinsResult is one setup's flood.
type joinsResult struct {
	setup  string
	stages []joinsStage
	// over two instances: the second instance's lag in the change log,
	// sampled every 100 ms during the flood, and how long after the last
	// OK it had applied everything
	lagP95, lagMax float64 // seconds
	entriesMax     int64
	settle         time.Duration
	load           string // /proc/loadavg before the setup
}

// runJoins floods one open group with NIP-29 joins (9021, each from a
// fresh key, unauthenticated connections as a client would send them)
// and reports joins/s as the group grows through each size, with the
// relays' CPU per join; over two PostgreSQL instances the joins go to
// the first and the second's change-log lag is sampled from its
// /api/v1/health.
func runJoins(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("joins", flag.ContinueOnError)
	fs.SetOutput(stderr)
	postgres := fs.String("postgres", "", "PostgreSQL URL of a role that may CREATE DATABASE; without it only badger runs")
	sizesFlag := fs.String("sizes", "10,1000,5000", "member counts the group grows through, ascending")
	publishers := fs.Int("publishers", 16, "connections sending joins at once")
	bin := fs.String("snowclaw", "", "snowclaw binary (default: go build ./cmd/snowclaw)")
	dirFlag := fs.String("dir", "", "work directory (default: a temp dir, removed)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var sizes []int
	for _, s := range strings.Split(*sizesFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || (len(sizes) > 0 && n <= sizes[len(sizes)-1]) {
			return fmt.Errorf("joins: --sizes %q: want ascending counts like 10,1000,5000", *sizesFlag)
		}
		sizes = append(sizes, n)
	}
	dir, cleanup, err := workDir(*dirFlag)
	if err != nil {
		return err
	}
	defer cleanup()
	exe, err := buildSnowclaw(ctx, *bin, dir, stderr)
	if err != nil {
		return err
	}
	total := sizes[len(sizes)-1]
	joins := make([]nostr.Event, total)
	for i := range joins {
		joins[i] = nostr.Event{Kind: 9021, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"h", "flood"}}, Content: ""}
		if err := joins[i].Sign(nostr.GeneratePrivateKey()); err != nil {
			return err
		}
	}
	setups := []struct {
		name string
		n    int
	}{{"badger", 1}}
	if *postgres != "" {
		setups = append(setups, struct {
			name string
			n    int
		}{"postgres×1", 1}, struct {
			name string
			n    int
		}{"postgres×2", 2})
	}
	fmt.Fprintf(stdout, "joins: one open group grown to %v members by %d connections; CPU is every relay process's user+system\n", sizes, *publishers)
	var results []joinsResult
	for i, s := range setups {
		url := ""
		if s.n > 0 && s.name != "badger" {
			var drop func()
			if url, drop, err = freshDatabaseDropped(ctx, *postgres); err != nil {
				return err
			}
			defer drop()
		}
		r, err := joinsSetup(ctx, exe, filepath.Join(dir, strconv.Itoa(i)), s.name, s.n, url, joins, sizes, *publishers)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		results = append(results, r)
	}
	fmt.Fprintf(stdout, "%-12s %-28s", "setup", "load before")
	for _, n := range sizes {
		fmt.Fprintf(stdout, " %14s", fmt.Sprintf("joins/s→%d", n))
		fmt.Fprintf(stdout, " %12s", "CPU µs/join")
	}
	fmt.Fprintf(stdout, " %9s %9s %9s %9s\n", "lag-p95", "lag-max", "behind", "settle")
	for _, r := range results {
		fmt.Fprintf(stdout, "%-12s %-28s", r.setup, r.load)
		for _, st := range r.stages {
			fmt.Fprintf(stdout, " %14.0f %12.0f", st.joinsPS, st.cpuPerUS)
		}
		if r.setup == "postgres×2" {
			fmt.Fprintf(stdout, " %8.2fs %8.2fs %9d %9s\n", r.lagP95, r.lagMax, r.entriesMax, r.settle.Round(time.Millisecond))
		} else {
			fmt.Fprintf(stdout, " %9s %9s %9s %9s\n", "-", "-", "-", "-")
		}
	}
	return nil
}

// freshDatabaseDropped is freshDatabase and the function that drops it.
func freshDatabaseDropped(ctx context.Context, admin string) (string, func(), error) {
	u, name, err := freshDatabase(ctx, admin)
	if err != nil {
		return "", nil, err
	}
	return u, func() { dropBenchDatabase(admin, name) }, nil
}

func joinsSetup(ctx context.Context, bin, dir, setup string, n int, dbURL string, joins []nostr.Event, sizes []int, publishers int) (joinsResult, error) {
	r := joinsResult{setup: setup, load: loadAvg()}
	keys := filepath.Join(dir, "keys")
	if _, err := relay.LoadKeys(keys, true); err != nil {
		return r, err
	}
	ownerSK := nostr.GeneratePrivateKey()
	ownerPK, _ := nostr.GetPublicKey(ownerSK)
	procs, err := startInstances(ctx, bin, dir, setup, keys, ownerPK, dbURL, n, false)
	defer stopAll(procs)
	if err != nil {
		return r, err
	}
	owner, err := dial(procs[0].url)
	if err != nil {
		return r, err
	}
	defer owner.close()
	create := nostr.Event{Kind: 9007, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"h", "flood"}, {"public"}, {"open"}}}
	if err := create.Sign(ownerSK); err != nil {
		return r, err
	}
	if err := owner.publish(create); err != nil {
		return r, fmt.Errorf("creating the group: %w", err)
	}

	var lags []float64
	stopSampling := make(chan struct{})
	var sampled sync.WaitGroup
	if n > 1 {
		sampled.Go(func() {
			for {
				select {
				case <-stopSampling:
					return
				case <-time.After(100 * time.Millisecond):
				}
				if l, err := feedLag(procs[1].url); err == nil {
					lags = append(lags, l.Seconds)
					r.entriesMax = max(r.entriesMax, l.Entries)
				}
			}
		})
	}
	done := 1 // the owner
	for _, size := range sizes {
		batch := joins[done-1 : size-1]
		before, err := cpuOf(procs)
		if err != nil {
			return r, err
		}
		start := time.Now()
		if err := floodJoins(procs[0].url, batch, publishers); err != nil {
			return r, err
		}
		took := time.Since(start)
		after, err := cpuOf(procs)
		if err != nil {
			return r, err
		}
		r.stages = append(r.stages, joinsStage{size: size, joinsPS: float64(len(batch)) / took.Seconds(),
			cpuPerUS: float64((after - before).Microseconds()) / float64(max(len(batch), 1))})
		done = size
	}
	flooded := time.Now()
	if n > 1 {
		for {
			l, err := feedLag(procs[1].url)
			if err == nil && l.Entries == 0 {
				break
			}
			if time.Since(flooded) > 5*time.Minute {
				return r, errors.New("the second instance never caught up")
			}
			time.Sleep(20 * time.Millisecond)
		}
		r.settle = time.Since(flooded)
		close(stopSampling)
		sampled.Wait()
		slices.Sort(lags)
		if len(lags) > 0 {
			r.lagP95, r.lagMax = lags[len(lags)*95/100], lags[len(lags)-1]
		}
	}
	return r, nil
}

// floodJoins sends evs over conns connections, each waiting for its OK.
func floodJoins(url string, evs []nostr.Event, conns int) error {
	errs := make([]error, conns)
	var wg sync.WaitGroup
	for i := range conns {
		c, err := dial(url)
		if err != nil {
			return err
		}
		wg.Go(func() {
			defer c.close()
			for j := i; j < len(evs); j += conns {
				if err := c.publish(evs[j]); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// cpuOf sums the processes' CPU time.
func cpuOf(procs []*proc) (time.Duration, error) {
	var total time.Duration
	for _, p := range procs {
		c, err := p.cpu()
		if err != nil {
			return 0, err
		}
		total += c
	}
	return total, nil
}

// feedLag is an instance's change-log lag from its /api/v1/health.
func feedLag(wsURL string) (relay.FeedLag, error) {
	u := "http" + strings.TrimPrefix(wsURL, "ws") + "/api/v1/health"
	resp, err := http.Get(u)
	if err != nil {
		return relay.FeedLag{}, err
	}
	defer resp.Body.Close()
	var h struct {
		Feed *relay.FeedLag `json:"feed"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		return relay.FeedLag{}, err
	}
	if h.Feed == nil {
		return relay.FeedLag{}, errors.New("no feed in health: not a shared store")
	}
	return *h.Feed, nil
}

// dropBenchDatabase drops a database freshDatabase made, once nothing
// uses it.
func dropBenchDatabase(admin, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return
	}
	defer conn.Close(ctx)
	_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
}

// loadAvg is /proc/loadavg's first three fields.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
