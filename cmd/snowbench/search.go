package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/internal/eval/benchcorpus"
)

// searchOpts are the flags of `snowbench search`.
type searchOpts struct {
	n, queries, warmup int
	snowclaw, dir      string
	relays             string
	cpuprofile         bool
	restart            bool
	memLimitMB         int // snowclaw's relay.memory_limit_mb
}

// searchResult is one relay's figures. A start is timed three ways from
// the process's start: until it prints that it listens, until a REQ is
// answered (EOSE) and until a search is (EOSE, not a "loading" CLOSED):
// snowclaw serves before its index is loaded, and what the first start
// builds is done when the first search is answered.
type searchResult struct {
	relay             string
	firstStart        time.Duration // process start → listening
	firstREQ          time.Duration // → the first REQ answered
	firstSearch       time.Duration // → the first search answered: the index built from the store
	reindexRate       float64       // docs/s of that build (n / firstSearch)
	settle            time.Duration // after the first search, until the relay's CPU went quiet (background linking)
	restart           time.Duration // second start, index already on disk: → listening
	restartREQ        time.Duration // → the first REQ answered
	restartSearch     time.Duration // → the first search answered
	restartSettle     time.Duration // after that, until its CPU went quiet
	restartPeakRSS    int64         // the second process's peak RSS, settled
	p50, p95, p99     float64       // ms, REQ → EOSE
	cpuPerReq         float64       // ms of the relay's CPU per timed REQ (/proc/<pid>/stat), which load moves less
	recall            float64       // recall@10 over the query set
	peakRSS, afterRSS int64
}

// runSearch measures NIP-50 search over websocket on a corpus of n seeded
// memories stored directly into a badger store, for snowclaw and for a
// bare khatru + badger + bluge relay, each on its own copy of the store.
func runSearch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o searchOpts
	fs := flag.NewFlagSet("search", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.n, "n", 100_000, "memories in the corpus")
	fs.IntVar(&o.queries, "queries", 1000, "timed search REQs per relay (cycling through 400 distinct queries)")
	fs.IntVar(&o.warmup, "warmup", 50, "untimed REQs first")
	fs.StringVar(&o.snowclaw, "snowclaw", "", "snowclaw binary (default: go build ./cmd/snowclaw)")
	fs.StringVar(&o.dir, "dir", "", "work directory; the corpus store is kept there as corpus-<n> and reused (default: a temp dir, removed)")
	fs.BoolVar(&o.cpuprofile, "cpuprofile", false, "write each relay's CPU profile (first start to stop) to <dir>/<relay>-<n>.pprof")
	fs.BoolVar(&o.restart, "restart", true, "also time a second start on the built index")
	fs.StringVar(&o.relays, "relays", "snowclaw,bare", `relays to measure, in order ("": only write the corpus store)`)
	// the target is 1M memories in 3 GB (3e9 bytes) of RSS (docs/benchmarks.md,
	// "1M memories within 3 GB"): the
	// relay runs as one deployed in that budget is configured (GOMEMLIMIT
	// still wins). The limit is on the Go heap; badger's memory-mapped
	// tables add their pages on top (about 330 MiB at 1M), hence 2,400.
	fs.IntVar(&o.memLimitMB, "memory-limit-mb", 2400, "snowclaw's relay.memory_limit_mb (soft memory limit, MiB; 0: automatic, -1: off)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	dir, cleanup, err := workDir(o.dir)
	if err != nil {
		return err
	}
	defer cleanup()
	bin, err := buildSnowclaw(ctx, o.snowclaw, dir, stderr)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}

	mems := benchcorpus.Generate(corpusSeed, o.n)
	queries := benchcorpus.Queries(mems, corpusQuerySeed, 400)
	began := time.Now()
	evs, err := corpusEvents(ctx, mems)
	if err != nil {
		return err
	}
	byID := make(map[string]int, len(evs))
	for i := range evs {
		byID[evs[i].ID] = i
	}
	fmt.Fprintf(stdout, "search: %d memories signed in %s\n", o.n, time.Since(began).Round(time.Millisecond))
	corpus := filepath.Join(dir, fmt.Sprintf("corpus-%d", o.n))
	if _, err := os.Stat(corpus); err != nil {
		took, err := writeCorpus(ctx, corpus, evs)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "search: stored in a badger store in %s (%.0f events/s)\n", took.Round(time.Millisecond), float64(o.n)/took.Seconds())
	}
	evs = nil

	var results []searchResult
	for _, name := range strings.FieldsFunc(o.relays, func(r rune) bool { return r == ',' }) {
		data := filepath.Join(dir, fmt.Sprintf("%s-%d", name, o.n))
		if err := copyStore(corpus, filepath.Join(data, "events")); err != nil {
			return err
		}
		var binary string
		var args, env []string
		switch name {
		case "snowclaw":
			binary, args = bin, []string{"serve", "--addr", "127.0.0.1:0", "--data", data}
			env = append(snowclawEnv(), "SNOWCLAW_RELAY_MEMORY_LIMIT_MB="+strconv.Itoa(o.memLimitMB))
		case "bare":
			binary, args = self, []string{"bare", "--bluge", "--data", data}
		default:
			return fmt.Errorf("search: unknown relay %q", name)
		}
		if o.cpuprofile {
			args = append(args, "--cpuprofile", filepath.Join(dir, fmt.Sprintf("%s-%d.pprof", name, o.n)))
		}
		r, err := measureSearch(ctx, name, binary, args, env, data, o, queries, byID, stdout)
		if err != nil {
			return err
		}
		results = append(results, r)
		_ = os.RemoveAll(data)
	}
	fmt.Fprintf(stdout, "\n%d memories, %d timed REQs (limit 10) on one anonymous connection\n", o.n, o.queries)
	fmt.Fprintf(stdout, "%-9s %8s %8s %10s %9s %7s %8s %8s %10s %8s %8s %8s %10s %9s %9s %9s %12s\n",
		"relay", "listen", "1st-REQ", "1st-search", "reindex/s", "settle", "re-listen", "re-REQ", "re-search",
		"p50-ms", "p95-ms", "p99-ms", "cpu-ms/req", "recall@10", "peak-RSS", "RSS-after", "restart-peak")
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	for _, r := range results {
		fmt.Fprintf(stdout, "%-9s %8s %8s %10s %9.0f %7s %8s %8s %10s %8.2f %8.2f %8.2f %10.2f %9.3f %8dM %8dM %11dM\n", r.relay,
			ms(r.firstStart), ms(r.firstREQ), ms(r.firstSearch), r.reindexRate, r.settle.Round(time.Second),
			ms(r.restart), ms(r.restartREQ), ms(r.restartSearch),
			r.p50, r.p95, r.p99, r.cpuPerReq, r.recall, r.peakRSS>>20, r.afterRSS>>20, r.restartPeakRSS>>20)
	}
	return nil
}

func measureSearch(ctx context.Context, name, bin string, args, env []string, data string, o searchOpts,
	queries []benchcorpus.Query, byID map[string]int, stdout io.Writer) (searchResult, error) {
	r := searchResult{relay: name}
	p, err := startProc(ctx, name, bin, args, env, data+".log", 2*time.Hour)
	if err != nil {
		return r, err
	}
	r.firstStart = time.Since(p.began)
	if r.firstREQ, r.firstSearch, err = untilAnswered(ctx, p, queries[0].Text, 2*time.Hour); err != nil {
		p.stop()
		return r, err
	}
	r.reindexRate = float64(o.n) / r.firstSearch.Seconds()
	fmt.Fprintf(stdout, "%s: listening after %s, first REQ answered after %s, first search after %s (index built from the store)\n",
		name, r.firstStart.Round(time.Millisecond), r.firstREQ.Round(time.Millisecond), r.firstSearch.Round(time.Millisecond))
	r.settle, err = waitQuiet(ctx, p, time.Hour)
	if err != nil {
		p.stop()
		return r, err
	}
	c, err := dial(p.url)
	if err != nil {
		p.stop()
		return r, err
	}
	var rs benchcorpus.RecallStats
	durs := make([]time.Duration, 0, o.queries)
	var cpu0 time.Duration
	for i := 0; i < o.warmup+o.queries; i++ {
		if i == o.warmup {
			if cpu0, err = p.cpu(); err != nil {
				c.close()
				p.stop()
				return r, err
			}
		}
		q := queries[i%len(queries)]
		t0 := time.Now()
		ids, err := c.query("q"+strconv.Itoa(i), nostr.Filter{Kinds: []int{30078}, Search: q.Text, Limit: 10})
		d := time.Since(t0)
		if err != nil {
			c.close()
			p.stop()
			return r, fmt.Errorf("%s: search %q: %w", name, q.Text, err)
		}
		if i < o.warmup {
			continue
		}
		durs = append(durs, d)
		if i-o.warmup < len(queries) {
			got := make([]int, 0, len(ids))
			for _, id := range ids {
				if m, ok := byID[id]; ok {
					got = append(got, m)
				}
			}
			rs.Add(q, got, 10)
		}
	}
	if cpu1, err := p.cpu(); err == nil && len(durs) > 0 {
		r.cpuPerReq = float64(cpu1-cpu0) / float64(time.Millisecond) / float64(len(durs))
	}
	c.close()
	r.p50, r.p95, r.p99 = pct(durs, 0.50), pct(durs, 0.95), pct(durs, 0.99)
	r.recall = rs.Mean("")
	r.peakRSS, r.afterRSS, _ = p.rss()
	if err := p.stop(); err != nil {
		return r, fmt.Errorf("stopping %s: %w", name, err)
	}
	if !o.restart {
		fmt.Fprintf(stdout, "%s: p50 %.2f ms, p95 %.2f ms, p99 %.2f ms, recall@10 %.3f, peak RSS %d MB\n",
			name, r.p50, r.p95, r.p99, r.recall, r.peakRSS>>20)
		return r, nil
	}
	args = slices.DeleteFunc(slices.Clone(args), func(a string) bool { return strings.HasSuffix(a, ".pprof") || a == "--cpuprofile" })
	p, err = startProc(ctx, name, bin, args, env, data+".restart.log", time.Hour)
	if err != nil {
		return r, err
	}
	r.restart = time.Since(p.began)
	if r.restartREQ, r.restartSearch, err = untilAnswered(ctx, p, queries[0].Text, time.Hour); err != nil {
		p.stop()
		return r, err
	}
	// what a restart catches up on after it answers counts too: its peak
	// RSS is read once it is quiet
	if r.restartSettle, err = waitQuiet(ctx, p, time.Hour); err != nil {
		p.stop()
		return r, err
	}
	r.restartPeakRSS, _, _ = p.rss()
	if err := p.stop(); err != nil {
		return r, fmt.Errorf("stopping %s after the restart: %w", name, err)
	}
	fmt.Fprintf(stdout, "%s: p50 %.2f ms, p95 %.2f ms, p99 %.2f ms, recall@10 %.3f, peak RSS %d MB; restart: listening %s, REQ %s, search %s, quiet %s later, peak RSS %d MB\n",
		name, r.p50, r.p95, r.p99, r.recall, r.peakRSS>>20, r.restart.Round(time.Millisecond), r.restartREQ.Round(time.Millisecond),
		r.restartSearch.Round(time.Millisecond), r.restartSettle.Round(time.Second), r.restartPeakRSS>>20)
	return r, nil
}

// untilAnswered asks p, every 20 ms from when it listens, for a REQ and
// for a search (text) until each is answered to EOSE, and returns how
// long after the process started each first was. A search refused
// ("loading") is asked again; a connection that fails is dialled again.
func untilAnswered(ctx context.Context, p *proc, text string, limit time.Duration) (req, search time.Duration, err error) {
	var c *conn
	defer func() {
		if c != nil {
			c.close()
		}
	}()
	for deadline := time.Now().Add(limit); ; time.Sleep(20 * time.Millisecond) {
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("%s: no search answered within %s", p.name, limit)
		}
		if c == nil {
			if c, err = dial(p.url); err != nil {
				c = nil
				continue
			}
		}
		if req == 0 {
			if _, err := c.query("first-req", nostr.Filter{Kinds: []int{30078}, Limit: 1}); err != nil {
				c.close()
				c = nil
				continue
			}
			req = time.Since(p.began)
		}
		_, err := c.query("first-search", nostr.Filter{Kinds: []int{30078}, Search: text, Limit: 10})
		if err == nil {
			return req, time.Since(p.began), nil
		}
		if !errors.Is(err, errClosed) {
			c.close()
			c = nil
		}
	}
}

// waitQuiet waits until the relay's CPU use stays under a tenth of a core
// for ten seconds running (a background index build has finished; on a
// loaded machine a starved relay looks quiet for a few seconds) and
// returns how long that took.
func waitQuiet(ctx context.Context, p *proc, limit time.Duration) (time.Duration, error) {
	began := time.Now()
	last, err := p.cpu()
	if err != nil {
		return 0, err
	}
	quiet := 0
	for quiet < 10 {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(time.Second):
		}
		now, err := p.cpu()
		if err != nil {
			return 0, err
		}
		if now-last < 100*time.Millisecond {
			quiet++
		} else {
			quiet = 0
		}
		last = now
		if time.Since(began) > limit {
			return 0, errors.New("relay still busy after " + limit.String())
		}
	}
	return time.Since(began) - 10*time.Second, nil
}

// pct is the p-th quantile of durs, in milliseconds.
func pct(durs []time.Duration, p float64) float64 {
	if len(durs) == 0 {
		return 0
	}
	s := slices.Clone(durs)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return float64(s[max(i, 0)]) / float64(time.Millisecond)
}
