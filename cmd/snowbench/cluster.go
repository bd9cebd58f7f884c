package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/internal/eval/benchcorpus"
	"github.com/snowclaw/snowclaw/relay"
)

// clusterOpts are the flags of `snowbench cluster`.
type clusterOpts struct {
	postgres, instances, snowclaw, dir string
	events, publishers, memories       int
	queries, probes                    int
	badger, cpuprofile                 bool
}

// clusterResult is one setup's figures.
type clusterResult struct {
	setup          string
	evps           float64
	ok50, ok99     float64   // EVENT → OK during the ingest, ms
	relayCPU       []float64 // per instance, µs of CPU per ingested event
	pgCPU          float64   // µs of PostgreSQL's CPU per ingested event; -1 unknown or none
	walSyncs       float64   // WAL flushes per ingested event; -1 none
	flushMS        float64   // ms per WAL flush (track_wal_io_timing); -1 unknown
	walKB          float64   // KB of WAL per ingested event; -1 none
	lock, walwait  float64   // share of active backend samples waiting on a heavyweight lock, for the WAL; -1 none
	p50, p95       float64   // search REQ → EOSE, ms
	live50, live95 float64   // OK on one instance → EVENT on another, ms
	rss            []int64   // per instance, after, bytes
	load           string    // the load average when the ingest ended
}

// runCluster measures snowclaw over badger and over one PostgreSQL with 1,
// 2, … instances: ingest events/s (8 authenticated publishers spread over
// the instances) with the EVENT → OK latency, the CPU each relay and
// PostgreSQL spent per event (/proc), PostgreSQL's WAL flushes per event
// (pg_stat_wal) and the share of its busy backends waiting on locks
// (pg_stat_activity, sampled); NIP-50 search p50/p95 over websocket
// (queries spread too), how long an event accepted by one instance takes
// to reach a live subscriber on another, and each instance's RSS.
func runCluster(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o clusterOpts
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.postgres, "postgres", "", "PostgreSQL URL of a role that may CREATE DATABASE (a fresh database per setup is made there and dropped)")
	fs.StringVar(&o.instances, "instances", "1,2", "instance counts to run over PostgreSQL, comma-separated; N/W runs N instances with the publishers on the first W only (2/1: the second only follows, which prices following)")
	fs.BoolVar(&o.badger, "badger", true, "also run one instance over badger, first")
	fs.BoolVar(&o.cpuprofile, "cpuprofile", false, "write each relay's CPU profile (start to stop) to <dir>/<setup>/instance-<i>.pprof (set --dir to keep them)")
	fs.IntVar(&o.events, "events", 10000, "kind 1 notes published per setup")
	fs.IntVar(&o.publishers, "publishers", 8, "authenticated publishing connections")
	fs.IntVar(&o.memories, "memories", 5000, "public memories stored before the searches")
	fs.IntVar(&o.queries, "queries", 500, "NIP-50 searches timed")
	fs.IntVar(&o.probes, "probes", 200, "events timed from one instance's OK to another's live subscriber")
	fs.StringVar(&o.snowclaw, "snowclaw", "", "snowclaw binary (default: go build ./cmd/snowclaw)")
	fs.StringVar(&o.dir, "dir", "", "work directory (default: a temp dir, removed)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.postgres == "" {
		return errors.New("cluster: --postgres URL is required (a server the benchmark may create databases on)")
	}
	var counts []instanceCount
	for _, s := range strings.Split(o.instances, ",") {
		c, err := parseInstanceCount(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("cluster: --instances %q: want counts like 1,2 or 2/1: %w", o.instances, err)
		}
		counts = append(counts, c)
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
	sks := make([]string, o.publishers)
	for i := range sks {
		sks[i] = nostr.GeneratePrivateKey()
	}
	notes, err := signNotes(sks, o.events, false)
	if err != nil {
		return err
	}
	mems, queries := benchcorpus.Generate(11, o.memories), benchcorpus.Queries(benchcorpus.Generate(11, o.memories), 12, o.queries)
	memEvs := make([]nostr.Event, len(mems))
	for i, m := range mems {
		content, _ := json.Marshal(map[string]string{"summary": m.Content})
		memEvs[i] = nostr.Event{Kind: 30078, CreatedAt: nostr.Timestamp(m.CreatedAt), Content: string(content), Tags: nostr.Tags{{"d", snowclaw.MemoryItemD(m.Topic)}}}
		if err := memEvs[i].Sign(sks[i%len(sks)]); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "cluster: %d notes from %d authenticated connections, %d memories, %d searches, %d cross-instance probes\n",
		o.events, o.publishers, o.memories, o.queries, o.probes)
	server, err := openServer(ctx, o.postgres)
	if err != nil {
		return err
	}
	if server.postmaster == 0 {
		fmt.Fprintln(stderr, "cluster: PostgreSQL's postmaster.pid is not readable here (another machine?): its CPU is not measured")
	}
	fmt.Fprintf(stdout, "cluster: load average %s at the start\n", loadAverage())
	var setups []string
	if o.badger {
		setups = append(setups, "badger")
	}
	for _, c := range counts {
		setups = append(setups, "postgres"+c.String())
	}
	var results []clusterResult
	for i, setup := range setups {
		n, url, db := instanceCount{1, 1}, "", ""
		var srv *pgServer
		if setup != "badger" {
			n, srv = counts[i-len(setups)+len(counts)], server
			if url, db, err = freshDatabase(ctx, o.postgres); err != nil {
				return err
			}
		}
		r, err := runSetup(ctx, bin, filepath.Join(dir, strconv.Itoa(i)), setup, n, url, db, srv, sks, notes, memEvs, queries, o.probes, o.cpuprofile)
		if db != "" {
			// the relays have stopped: nothing uses it any more
			if derr := dropDatabase(context.WithoutCancel(ctx), o.postgres, db); derr != nil {
				fmt.Fprintf(stderr, "cluster: dropping database %s: %v\n", db, derr)
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", setup, err)
		}
		fmt.Fprintf(stdout, "%s: %.0f events/s, load average %s\n", setup, r.evps, r.load)
		results = append(results, r)
	}
	printCluster(stdout, results)
	return nil
}

// printCluster prints the figures of every setup, and the ratios the
// scaling targets are stated in.
func printCluster(w io.Writer, results []clusterResult) {
	num := func(v float64, format string) string {
		if v < 0 {
			return "-"
		}
		return fmt.Sprintf(format, v)
	}
	fmt.Fprintf(w, "\n%-12s %9s %8s %8s %13s %8s %9s %7s %8s %7s %7s %8s %8s %8s %9s %9s %s\n",
		"setup", "events/s", "ok-p50", "ok-p99", "relay-µs/ev", "pg-µs/ev", "total-µs", "wal/ev", "flush-ms", "walKB/ev", "lock%", "walwait%",
		"srch-p50", "srch-p95", "live-p50", "live-p95", "RSS-MB per instance")
	for _, r := range results {
		var rss, relay []string
		total := 0.0
		for _, b := range r.rss {
			rss = append(rss, strconv.FormatInt(b>>20, 10))
		}
		for _, c := range r.relayCPU {
			relay = append(relay, fmt.Sprintf("%.0f", c))
			total += c
		}
		if r.pgCPU > 0 {
			total += r.pgCPU
		}
		live := func(v float64) string {
			if r.live95 == 0 {
				return "-"
			}
			return fmt.Sprintf("%.2f", v)
		}
		pct := func(v float64) string { return num(100*v, "%.1f") }
		if r.lock < 0 {
			pct = func(float64) string { return "-" }
		}
		fmt.Fprintf(w, "%-12s %9.0f %8.2f %8.2f %13s %8s %9.0f %7s %8s %7s %7s %8s %8.2f %8.2f %9s %9s %s\n",
			r.setup, r.evps, r.ok50, r.ok99, strings.Join(relay, "+"), num(r.pgCPU, "%.0f"), total,
			num(r.walSyncs, "%.3f"), num(r.flushMS, "%.2f"), num(r.walKB, "%.2f"), pct(r.lock), pct(r.walwait), r.p50, r.p95, live(r.live50), live(r.live95), strings.Join(rss, " "))
	}
	var badger, one float64
	for _, r := range results {
		switch r.setup {
		case "badger":
			badger = r.evps
		case "postgres×1":
			one = r.evps
		}
	}
	for _, r := range results {
		if r.setup == "badger" || badger == 0 {
			continue
		}
		fmt.Fprintf(w, "%s: %.2f× badger's events/s", r.setup, r.evps/badger)
		if one > 0 && r.setup != "postgres×1" {
			fmt.Fprintf(w, ", %.2f× one instance's", r.evps/one)
		}
		fmt.Fprintln(w)
	}
}

// freshDatabase creates an empty database on admin's server and returns
// its URL and name; the caller drops it (dropDatabase).
func freshDatabase(ctx context.Context, admin string) (string, string, error) {
	u, err := url.Parse(admin)
	if err != nil {
		return "", "", err
	}
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", "", fmt.Errorf("connecting to --postgres: %w", err)
	}
	defer conn.Close(ctx)
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := "snowbench_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", "", err
	}
	u.Path = "/" + name
	return u.String(), name, nil
}

// runSetup starts n instances (sharing url, or one over badger), loads
// them and measures.
// instanceCount is one PostgreSQL setup: n instances, the publishers
// spread over the first writers.
type instanceCount struct{ n, writers int }

func parseInstanceCount(s string) (instanceCount, error) {
	ns, ws, split := strings.Cut(s, "/")
	n, err := strconv.Atoi(ns)
	if err != nil || n < 1 {
		return instanceCount{}, fmt.Errorf("%q: not a count", s)
	}
	w := n
	if split {
		if w, err = strconv.Atoi(ws); err != nil || w < 1 || w > n {
			return instanceCount{}, fmt.Errorf("%q: want 1 to %d writing instances", s, n)
		}
	}
	return instanceCount{n, w}, nil
}

func (c instanceCount) String() string {
	if c.writers == c.n {
		return fmt.Sprintf("×%d", c.n)
	}
	return fmt.Sprintf("×%d/%d", c.n, c.writers)
}

func runSetup(ctx context.Context, bin, dir, setup string, count instanceCount, dbURL, db string, srv *pgServer, sks []string, notes, mems []nostr.Event, queries []benchcorpus.Query, probes int, cpuprofile bool) (clusterResult, error) {
	r := clusterResult{setup: setup, pgCPU: -1, walSyncs: -1, flushMS: -1, walKB: -1, lock: -1, walwait: -1}
	keys := filepath.Join(dir, "keys")
	if _, err := relay.LoadKeys(keys, true); err != nil {
		return r, err
	}
	ownerPK, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	procs, err := startInstances(ctx, bin, dir, setup, keys, ownerPK, dbURL, count.n, cpuprofile)
	defer stopAll(procs)
	if err != nil {
		return r, err
	}
	n := count.n
	if err := r.ingest(ctx, procs, count.writers, srv, db, sks, notes); err != nil {
		return r, err
	}
	if _, _, err := publishSpread(procs, sks, mems); err != nil {
		return r, err
	}
	time.Sleep(2 * time.Second) // every instance indexes within 1 s (docs/design.md)
	if n > 1 {
		if r.live50, r.live95, err = crossInstance(procs[0], procs[1], probes); err != nil {
			return r, err
		}
	}
	if r.p50, r.p95, err = searchSpread(procs, queries); err != nil {
		return r, err
	}
	for _, p := range procs {
		_, now, err := p.rss()
		if err != nil {
			return r, err
		}
		r.rss = append(r.rss, now)
	}
	return r, nil
}

// startInstances starts n `snowclaw serve` processes on data directories
// under dir, each with the keys in keys and, when dbURL is set, over that
// PostgreSQL database; what started is returned even on an error, for
// stopAll.
func startInstances(ctx context.Context, bin, dir, setup, keys, ownerPK, dbURL string, n int, cpuprofile bool) ([]*proc, error) {
	var procs []*proc
	for i := range n {
		data := filepath.Join(dir, fmt.Sprintf("instance-%d", i))
		if err := copyKeys(keys, data); err != nil {
			return procs, err
		}
		args := []string{"serve", "--addr", "127.0.0.1:0", "--data", data, "--owner", ownerPK}
		if dbURL != "" {
			args = append(args, "--store-url", dbURL)
		}
		if cpuprofile {
			args = append(args, "--cpuprofile", data+".pprof")
		}
		p, err := startProc(ctx, fmt.Sprintf("%s-%d", setup, i), bin, args, snowclawEnv(), data+".log", 5*time.Minute)
		if err != nil {
			return procs, err
		}
		procs = append(procs, p)
	}
	return procs, nil
}

func stopAll(procs []*proc) {
	for _, p := range procs {
		_ = p.stop()
	}
}

func copyKeys(from, to string) error {
	if err := os.MkdirAll(to, 0o700); err != nil {
		return err
	}
	for _, f := range []string{relay.RelayKeyFile, relay.AgentKeyFile} {
		b, err := os.ReadFile(filepath.Join(from, f))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, f), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// ingest publishes notes and measures what they cost: events/s, OK
// latency, each relay's CPU and, over PostgreSQL (srv), the server's CPU,
// its WAL flushes and its lock waits, all per event.
func (r *clusterResult) ingest(ctx context.Context, procs []*proc, writers int, srv *pgServer, db string, sks []string, notes []nostr.Event) error {
	cpu0 := make([]time.Duration, len(procs))
	for i, p := range procs {
		var err error
		if cpu0[i], err = p.cpu(); err != nil {
			return err
		}
	}
	var pg0 time.Duration
	var pgOK bool
	var wal0 walStats
	var waits *waitSampler
	if srv != nil {
		var err error
		if wal0, err = srv.wal(ctx); err != nil {
			return fmt.Errorf("reading pg_stat_wal: %w", err)
		}
		pg0, pgOK = srv.cpu()
		waits = srv.sampleWaits(ctx, db)
	}
	evps, lat, err := publishSpread(procs[:writers], sks, notes)
	if err != nil {
		if waits != nil {
			_, _, _ = waits.shares()
		}
		return err
	}
	r.evps, r.ok50, r.ok99 = evps, pct(lat, 0.50), pct(lat, 0.99)
	r.load = loadAverage()
	events := float64(len(notes))
	for i, p := range procs {
		c, err := p.cpu()
		if err != nil {
			return err
		}
		r.relayCPU = append(r.relayCPU, float64(c-cpu0[i])/float64(time.Microsecond)/events)
	}
	if srv == nil {
		return nil
	}
	pg1, ok := srv.cpu()
	if r.lock, r.walwait, err = waits.shares(); err != nil {
		return fmt.Errorf("sampling pg_stat_activity: %w", err)
	}
	if ok && pgOK {
		r.pgCPU = float64(pg1-pg0-waits.cpu) / float64(time.Microsecond) / events
	}
	wal1, err := srv.wal(ctx)
	if err != nil {
		return fmt.Errorf("reading pg_stat_wal: %w", err)
	}
	r.walSyncs = float64(wal1.syncs-wal0.syncs) / events
	r.walKB = (wal1.bytes - wal0.bytes) / 1024 / events
	if n := wal1.syncs - wal0.syncs; n > 0 && wal1.syncMS > wal0.syncMS {
		r.flushMS = (wal1.syncMS - wal0.syncMS) / float64(n)
	}
	return nil
}

// publishSpread has publisher i send evs[i], evs[i+P], … to instance
// i mod len(procs), each after the previous OK; it returns events/s and
// each event's EVENT → OK time.
func publishSpread(procs []*proc, sks []string, evs []nostr.Event) (float64, []time.Duration, error) {
	conns := make([]*conn, len(sks))
	for i, sk := range sks {
		c, err := dialAuth(procs[i%len(procs)].url, sk)
		if err != nil {
			return 0, nil, err
		}
		defer c.close()
		conns[i] = c
	}
	errs := make([]error, len(conns))
	lats := make([][]time.Duration, len(conns))
	start := time.Now()
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() {
			for j := i; j < len(evs); j += len(conns) {
				t0 := time.Now()
				if err := c.publish(evs[j]); err != nil {
					errs[i] = err
					return
				}
				lats[i] = append(lats[i], time.Since(t0))
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	return float64(len(evs)) / took.Seconds(), all, errors.Join(errs...)
}

// crossInstance publishes probes events on a, one at a time, and times
// each from its OK to its arrival at a live subscription on b.
func crossInstance(a, b *proc, probes int) (p50, p95 float64, err error) {
	sk := nostr.GeneratePrivateKey()
	pk, _ := nostr.GetPublicKey(sk)
	pub, err := dialAuth(a.url, sk)
	if err != nil {
		return 0, 0, err
	}
	defer pub.close()
	sub, err := dial(b.url)
	if err != nil {
		return 0, 0, err
	}
	defer sub.close()
	if err := sub.ws.WriteJSON([]any{"REQ", "probe", nostr.Filter{Kinds: []int{1}, Authors: []string{pk}, Limit: 1}}); err != nil {
		return 0, 0, err
	}
	for {
		label, _, err := sub.read()
		if err != nil {
			return 0, 0, err
		}
		if label == "EOSE" {
			break
		}
	}
	var durs []time.Duration
	for i := range probes {
		evt := nostr.Event{Kind: 1, CreatedAt: nostr.Now(), Content: "probe " + strconv.Itoa(i), Tags: nostr.Tags{}}
		_ = evt.Sign(sk)
		if err := pub.publish(evt); err != nil {
			return 0, 0, err
		}
		ok := time.Now()
		for {
			label, f, err := sub.read()
			if err != nil {
				return 0, 0, fmt.Errorf("probe %d never reached the other instance: %w", i, err)
			}
			var got nostr.Event
			if label == "EVENT" && len(f) >= 3 && json.Unmarshal(f[2], &got) == nil && got.ID == evt.ID {
				durs = append(durs, time.Since(ok))
				break
			}
		}
	}
	return pct(durs, 0.50), pct(durs, 0.95), nil
}

// searchSpread times NIP-50 REQs to EOSE, query i to instance i mod n.
func searchSpread(procs []*proc, queries []benchcorpus.Query) (p50, p95 float64, err error) {
	conns := make([]*conn, len(procs))
	for i, p := range procs {
		if conns[i], err = dial(p.url); err != nil {
			return 0, 0, err
		}
		defer conns[i].close()
	}
	var durs []time.Duration
	for i, q := range queries {
		start := time.Now()
		if _, err := conns[i%len(conns)].query("q"+strconv.Itoa(i), nostr.Filter{Kinds: []int{30078}, Search: q.Text, Limit: 10}); err != nil {
			return 0, 0, err
		}
		durs = append(durs, time.Since(start))
	}
	return pct(durs, 0.50), pct(durs, 0.95), nil
}
