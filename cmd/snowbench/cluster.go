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
	"github.com/snowclaw/snowclaw/internal/benchcorpus"
	"github.com/snowclaw/snowclaw/relay"
)

// clusterOpts are the flags of `snowbench cluster`.
type clusterOpts struct {
	postgres, instances, snowclaw, dir string
	events, publishers, memories       int
	queries, probes                    int
}

// clusterResult is one setup's figures.
type clusterResult struct {
	setup          string
	evps           float64
	p50, p95       float64 // search REQ → EOSE, ms
	live50, live95 float64 // OK on one instance → EVENT on another, ms
	rss            []int64 // per instance, after, bytes
}

// runCluster measures snowclaw over badger and over one PostgreSQL with 1,
// 2, … instances: ingest events/s (8 authenticated publishers spread over
// the instances), NIP-50 search p50/p95 over websocket (queries spread too),
// how long an event accepted by one instance takes to reach a live
// subscriber on another, and each instance's RSS.
func runCluster(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o clusterOpts
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.postgres, "postgres", "", "PostgreSQL URL of a role that may CREATE DATABASE (a fresh database per setup is made there and dropped)")
	fs.StringVar(&o.instances, "instances", "1,2", "instance counts to run over PostgreSQL, comma-separated")
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
	var counts []int
	for _, s := range strings.Split(o.instances, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("cluster: --instances %q: want counts like 1,2", o.instances)
		}
		counts = append(counts, n)
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
		memEvs[i] = nostr.Event{Kind: 30078, CreatedAt: nostr.Timestamp(m.CreatedAt), Content: string(content), Tags: nostr.Tags{{"d", "snow:memory:" + m.Topic}}}
		if err := memEvs[i].Sign(sks[i%len(sks)]); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "cluster: %d notes from %d authenticated connections, %d memories, %d searches, %d cross-instance probes\n",
		o.events, o.publishers, o.memories, o.queries, o.probes)
	setups := []string{"badger"}
	for _, n := range counts {
		setups = append(setups, fmt.Sprintf("postgres×%d", n))
	}
	var results []clusterResult
	for i, setup := range setups {
		n, url := 1, ""
		if setup != "badger" {
			n = counts[i-1]
			if url, err = freshDatabase(ctx, o.postgres); err != nil {
				return err
			}
		}
		r, err := runSetup(ctx, bin, filepath.Join(dir, strconv.Itoa(i)), setup, n, url, sks, notes, memEvs, queries, o.probes)
		if err != nil {
			return fmt.Errorf("%s: %w", setup, err)
		}
		results = append(results, r)
	}
	fmt.Fprintf(stdout, "%-12s %10s %9s %9s %10s %10s %s\n", "setup", "events/s", "p50-ms", "p95-ms", "live-p50", "live-p95", "RSS-MB per instance")
	for _, r := range results {
		var rss []string
		for _, b := range r.rss {
			rss = append(rss, strconv.FormatInt(b>>20, 10))
		}
		live := func(v float64) string {
			if r.live95 == 0 {
				return "-"
			}
			return fmt.Sprintf("%.2f", v)
		}
		fmt.Fprintf(stdout, "%-12s %10.0f %9.2f %9.2f %10s %10s %s\n", r.setup, r.evps, r.p50, r.p95, live(r.live50), live(r.live95), strings.Join(rss, " "))
	}
	return nil
}

// freshDatabase creates an empty database on admin's server and returns
// its URL.
func freshDatabase(ctx context.Context, admin string) (string, error) {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", fmt.Errorf("connecting to --postgres: %w", err)
	}
	defer conn.Close(ctx)
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := "snowbench_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", err
	}
	u, err := url.Parse(admin)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

// runSetup starts n instances (sharing url, or one over badger), loads
// them and measures.
func runSetup(ctx context.Context, bin, dir, setup string, n int, dbURL string, sks []string, notes, mems []nostr.Event, queries []benchcorpus.Query, probes int) (clusterResult, error) {
	r := clusterResult{setup: setup}
	keys := filepath.Join(dir, "keys")
	if _, err := relay.LoadKeys(keys, true); err != nil {
		return r, err
	}
	ownerPK, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	var procs []*proc
	defer func() {
		for _, p := range procs {
			_ = p.stop()
		}
	}()
	for i := range n {
		data := filepath.Join(dir, fmt.Sprintf("instance-%d", i))
		if err := copyKeys(keys, data); err != nil {
			return r, err
		}
		args := []string{"serve", "--addr", "127.0.0.1:0", "--data", data, "--owner", ownerPK}
		if dbURL != "" {
			args = append(args, "--store-url", dbURL)
		}
		p, err := startProc(ctx, fmt.Sprintf("%s-%d", setup, i), bin, args, snowclawEnv(), data+".log", 5*time.Minute)
		if err != nil {
			return r, err
		}
		procs = append(procs, p)
	}
	var err error
	if r.evps, err = publishSpread(procs, sks, notes); err != nil {
		return r, err
	}
	if _, err := publishSpread(procs, sks, mems); err != nil {
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

// publishSpread has publisher i send evs[i], evs[i+P], … to instance
// i mod len(procs), each after the previous OK; it returns events/s.
func publishSpread(procs []*proc, sks []string, evs []nostr.Event) (float64, error) {
	conns := make([]*conn, len(sks))
	for i, sk := range sks {
		c, err := dialAuth(procs[i%len(procs)].url, sk)
		if err != nil {
			return 0, err
		}
		defer c.close()
		conns[i] = c
	}
	errs := make([]error, len(conns))
	start := time.Now()
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() {
			for j := i; j < len(evs); j += len(conns) {
				if err := c.publish(evs[j]); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return float64(len(evs)) / time.Since(start).Seconds(), errors.Join(errs...)
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
