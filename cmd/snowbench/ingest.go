package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/internal/eval/benchcorpus"
)

// ingestOpts are the flags of `snowbench ingest`.
type ingestOpts struct {
	events, publishers, rounds int
	snowclaw, dir, mix         string
	cpuprofile                 bool
}

// benchGroup is the NIP-29 group of the "group" mix.
const benchGroup = "bench"

// runIngest publishes the same pre-signed kind 1 notes, from publishers
// NIP-42-authenticated connections each waiting for its OK before the next,
// to a fresh `snowclaw serve` (search and agent on, rate limits off) and to
// a fresh bare khatru + badger relay, rounds times, alternating which goes
// first so that whatever else loads the machine weighs on both.
func runIngest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o ingestOpts
	fs := flag.NewFlagSet("ingest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.events, "events", 20000, "events per relay per round")
	fs.IntVar(&o.publishers, "publishers", 8, "authenticated publishing connections")
	fs.IntVar(&o.rounds, "rounds", 3, "rounds; each runs both relays, alternating which goes first")
	fs.StringVar(&o.snowclaw, "snowclaw", "", "snowclaw binary (default: go build ./cmd/snowclaw)")
	fs.StringVar(&o.dir, "dir", "", "work directory for data, logs and profiles (default: a temp dir, removed)")
	fs.StringVar(&o.mix, "mix", "notes", `"notes": kind 1 notes; "group": half of them kind 9 chat in a NIP-29 group the publishers joined (embedded by snowclaw)`)
	fs.BoolVar(&o.cpuprofile, "cpuprofile", false, "write each relay's CPU profile to <dir>/<relay>-<round>.pprof")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.mix != "notes" && o.mix != "group" {
		return fmt.Errorf("ingest: --mix is notes or group, not %q", o.mix)
	}
	if o.events < o.publishers || o.publishers < 1 || o.rounds < 1 {
		return errors.New("ingest: need rounds ≥ 1, publishers ≥ 1 and events ≥ publishers")
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
	sks := make([]string, o.publishers)
	for i := range sks {
		sks[i] = nostr.GeneratePrivateKey()
	}
	ownerSK := nostr.GeneratePrivateKey()
	ownerPK, _ := nostr.GetPublicKey(ownerSK)
	evs, err := signNotes(sks, o.events, o.mix == "group")
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ingest: %d events (mix %s) per relay per round from %d authenticated connections, %d rounds, GOMAXPROCS %d\n",
		o.events, o.mix, o.publishers, o.rounds, runtime.GOMAXPROCS(0))
	fmt.Fprintf(stdout, "%-6s %-9s %12s %14s\n", "round", "relay", "events/s", "relay-cpu-µs/ev")
	rate := map[string][]float64{}
	cpu := map[string][]float64{}
	var ratios []float64
	for round := 1; round <= o.rounds; round++ {
		order := []string{"snowclaw", "bare"}
		if round%2 == 0 {
			order = []string{"bare", "snowclaw"}
		}
		got := map[string]float64{}
		for _, name := range order {
			data := filepath.Join(dir, fmt.Sprintf("%s-%d", name, round))
			if err := os.MkdirAll(data, 0o700); err != nil {
				return err
			}
			var args, env []string
			binary := bin
			prof := filepath.Join(dir, fmt.Sprintf("%s-%d.pprof", name, round))
			if name == "snowclaw" {
				args, env = []string{"serve", "--addr", "127.0.0.1:0", "--data", data, "--owner", ownerPK}, snowclawEnv()
			} else {
				binary, args = self, []string{"bare", "--data", data}
			}
			if o.cpuprofile {
				args = append(args, "--cpuprofile", prof)
			}
			p, err := startProc(ctx, name, binary, args, env, data+".log", 5*time.Minute)
			if err != nil {
				return err
			}
			if o.mix == "group" {
				err = joinGroup(p.url, ownerSK, sks)
			}
			var evps, cpuPer float64
			if err == nil {
				evps, cpuPer, err = publishAll(p, sks, evs)
			}
			if serr := p.stop(); err == nil && serr != nil {
				err = fmt.Errorf("stopping %s: %w", name, serr)
			}
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", round, name, err)
			}
			got[name] = evps
			rate[name] = append(rate[name], evps)
			cpu[name] = append(cpu[name], cpuPer)
			fmt.Fprintf(stdout, "%-6d %-9s %12.0f %14.0f\n", round, name, evps, cpuPer)
			if !o.cpuprofile {
				_ = os.RemoveAll(data)
			}
		}
		ratios = append(ratios, got["snowclaw"]/got["bare"])
	}
	fmt.Fprintf(stdout, "median events/s: snowclaw %.0f, bare %.0f; relay CPU µs/event: snowclaw %.0f, bare %.0f\n",
		median(rate["snowclaw"]), median(rate["bare"]), median(cpu["snowclaw"]), median(cpu["bare"]))
	fmt.Fprintf(stdout, "ratio snowclaw/bare per round: %s; median %.2f× (by relay CPU per event, which load on the machine moves less: %.2f×)\n",
		fmtList(ratios, "%.2f"), median(ratios), median(cpu["bare"])/median(cpu["snowclaw"]))
	if o.cpuprofile {
		fmt.Fprintf(stdout, "profiles: go tool pprof -top %s\n", filepath.Join(dir, "snowclaw-1.pprof"))
	}
	return nil
}

// signNotes signs n kind 1 notes whose text is the seeded memory corpus's
// (about 24 words each); note i is by publisher i mod len(sks). With
// group, every odd one is kind 9 chat in benchGroup instead.
func signNotes(sks []string, n int, group bool) ([]nostr.Event, error) {
	mems := benchcorpus.Generate(7, n)
	evs := make([]nostr.Event, n)
	now := nostr.Now()
	workers := runtime.GOMAXPROCS(0)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				evs[i] = nostr.Event{Kind: 1, CreatedAt: now - nostr.Timestamp(n-i)/100, Content: mems[i].Content, Tags: nostr.Tags{}}
				if group && i%2 == 1 {
					evs[i].Kind, evs[i].Tags = 9, nostr.Tags{{"h", benchGroup}}
				}
				if err := evs[i].Sign(sks[i%len(sks)]); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return evs, errors.Join(errs...)
}

// joinGroup has the owner create benchGroup (kind 9007) and every
// publisher join it (9021). The bare relay simply stores these.
func joinGroup(url, ownerSK string, sks []string) error {
	sign := func(sk string, kind int) nostr.Event {
		evt := nostr.Event{Kind: kind, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"h", benchGroup}}}
		_ = evt.Sign(sk)
		return evt
	}
	for i, sk := range append([]string{ownerSK}, sks...) {
		c, err := dialAuth(url, sk)
		if err != nil {
			return err
		}
		kind := 9021
		if i == 0 {
			kind = 9007
		}
		err = c.publish(sign(sk, kind))
		c.close()
		if err != nil {
			return fmt.Errorf("group setup (kind %d): %w", kind, err)
		}
	}
	return nil
}

// publishAll connects and authenticates one connection per key, then
// publisher p sends evs[p], evs[p+P], … each after the previous OK. It
// returns accepted events per second and the relay's CPU time per event.
func publishAll(p *proc, sks []string, evs []nostr.Event) (float64, float64, error) {
	conns := make([]*conn, len(sks))
	for i, sk := range sks {
		c, err := dialAuth(p.url, sk)
		if err != nil {
			return 0, 0, fmt.Errorf("publisher %d: %w", i, err)
		}
		defer c.close()
		conns[i] = c
	}
	cpu0, err := p.cpu()
	if err != nil {
		return 0, 0, err
	}
	began := time.Now()
	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() {
			for j := i; j < len(evs); j += len(conns) {
				if err := c.publish(evs[j]); err != nil {
					errs[i] = fmt.Errorf("publisher %d, event %d: %w", i, j, err)
					return
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(began)
	cpu1, cerr := p.cpu()
	if err := errors.Join(append(errs, cerr)...); err != nil {
		return 0, 0, err
	}
	return float64(len(evs)) / took.Seconds(), float64((cpu1 - cpu0).Microseconds()) / float64(len(evs)), nil
}

// workDir is dir, created, or a temp dir removed by cleanup.
func workDir(dir string) (string, func(), error) {
	if dir != "" {
		return dir, func() {}, os.MkdirAll(dir, 0o700)
	}
	d, err := os.MkdirTemp("", "snowbench-")
	if err != nil {
		return "", nil, err
	}
	return d, func() { _ = os.RemoveAll(d) }, nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func fmtList(xs []float64, format string) string {
	out := ""
	for i, x := range xs {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf(format, x)
	}
	return out
}
