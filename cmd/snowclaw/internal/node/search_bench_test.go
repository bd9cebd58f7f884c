package node_test

// NIP-50 search over websocket against a real relay (nothing here runs
// without -bench):
//
//	go test ./relay/ -run='^$' -bench=RelaySearch -benchtime=400x -timeout=60m
//
// The memories are internal/eval/benchcorpus's, published as public kind 30078
// snow:memory:<topic> events by four authors. How they get in depends on
// the size:
//
//	memories=10k:  published over websocket (4 connections, EVENT → OK),
//	               indexed live by the search plugin; reports publish-events/s.
//	memories=100k: indexing one event at a time is bound by bleve's
//	               persist-per-batch (a few ms per event, see BenchmarkIndex
//	               in search/), so the relay first runs without search and
//	               stores the events in-process (r.Publish, the write hooks
//	               minus the websocket), then is reopened with search on and
//	               builds the index from its store, as on a first start or
//	               `snowclaw reindex`; reports store-events/s and reindex-docs/s.
//
// Then b.N searches (REQ with search and limit 10, wait for EOSE) cycle
// through the query set on fresh connections (one per 20 queries, so the
// client's frame history stays short); p50/p95 are per REQ → EOSE, and
// recall@10 is measured once over the whole query set.

import (
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/eval/benchcorpus"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/internal/wsclient"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/relay"
)

const (
	searchBenchSeed      = 1 // the same corpus and queries as search/bench_test.go
	searchBenchQuerySeed = 2
	searchBenchQueries   = 400
	searchBenchLimit     = 10
	searchBenchAuthors   = 4
	searchBenchConns     = 4      // publishing connections
	searchBenchPerConn   = 20     // queries per search connection
	searchBenchWSMax     = 10_000 // larger corpora are loaded in-process and reindexed
)

func BenchmarkRelaySearch(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("memories=%dk", n/1000), func(b *testing.B) {
			dir := b.TempDir()
			var env *searchBenchEnv // loaded by the first run of "search", reused by the next
			b.Run("search", func(b *testing.B) {
				if env == nil {
					b.StopTimer()
					env = searchBenchLoad(b, dir, n)
					b.StartTimer()
				}
				env.run(b)
			})
			if env != nil {
				env.stop()
			}
		})
	}
}

type searchBenchEnv struct {
	n       *node.Node
	r       *relay.Relay // n's relay
	srv     *httptest.Server
	url     string
	queries []benchcorpus.Query
	byID    map[string]int
	metrics map[string]float64 // load rates, recall
}

func (e *searchBenchEnv) stop() {
	e.srv.CloseClientConnections()
	e.srv.Close()
	e.n.Close()
}

func searchBenchOptions(dir string, keys relay.Keys, withSearch bool) node.Options {
	o := node.Options{Options: relay.Options{
		DataDir:         dir,
		Name:            "snowclaw",
		Version:         "bench",
		Keys:            keys,
		Limits:          policies.DefaultLimits(),
		MaxMessageBytes: 512 * 1024,
		EventRateIP:     policies.Rate{},
		EventRatePubkey: policies.Rate{},
		FilterRateIP:    policies.Rate{},
		ConnRateIP:      policies.Rate{},
	},
		GroupDefaults:    policies.GroupInfo{Private: true, Restricted: true},
		MaxGroupEventAge: time.Hour,
	}
	o.Search.Enabled = withSearch
	o.Search.DefaultLimit = 20
	o.Search.MaxLimit = 100
	return o
}

// searchBenchEvents signs the first n memories (in parallel, untimed):
// memory i is written by author i mod 4, with fixed keys, so the events are
// the same on every run.
func searchBenchEvents(b *testing.B, mems []benchcorpus.Memory) []nostr.Event {
	sks := make([]string, searchBenchAuthors)
	for i := range sks {
		sks[i] = fmt.Sprintf("%064x", 0x5eed0000+i)
	}
	evs := make([]nostr.Event, len(mems))
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(mems); i += workers {
				m := mems[i]
				evs[i] = nostr.Event{
					Kind:      30078,
					CreatedAt: nostr.Timestamp(m.CreatedAt),
					Tags:      nostr.Tags{{"d", "snow:memory:" + m.Topic}},
					Content:   m.Content,
				}
				if err := evs[i].Sign(sks[i%searchBenchAuthors]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatalf("signing: %v", err)
	}
	return evs
}

func searchBenchLoad(b *testing.B, dir string, n int) *searchBenchEnv {
	ctx := context.Background()
	mems := benchcorpus.Generate(searchBenchSeed, n)
	e := &searchBenchEnv{
		queries: benchcorpus.Queries(mems, searchBenchQuerySeed, searchBenchQueries),
		byID:    make(map[string]int, n),
		metrics: make(map[string]float64),
	}
	evs := searchBenchEvents(b, mems)
	for i := range evs {
		e.byID[evs[i].ID] = i
	}
	keys := relay.Keys{RelaySecret: nostr.GeneratePrivateKey(), AgentSecret: nostr.GeneratePrivateKey()}

	if n <= searchBenchWSMax {
		e.start(b, searchBenchOptions(dir, keys, true))
		began := time.Now()
		searchBenchPublishWS(b, e.url, evs)
		e.metrics["publish-events/s"] = float64(n) / time.Since(began).Seconds()
	} else {
		nd, err := node.New(ctx, searchBenchOptions(dir, keys, false))
		if err != nil {
			b.Fatalf("node.New: %v", err)
		}
		began := time.Now()
		searchBenchPublishInProcess(b, nd.Relay(), evs)
		e.metrics["store-events/s"] = float64(n) / time.Since(began).Seconds()
		if err := nd.Close(); err != nil {
			b.Fatalf("closing the relay: %v", err)
		}
		began = time.Now()
		e.start(b, searchBenchOptions(dir, keys, true)) // no index yet: built from the store
		e.metrics["reindex-docs/s"] = float64(n) / time.Since(began).Seconds()
	}
	if got := e.n.Search().Count(); got != n {
		b.Fatalf("search index holds %d docs, want %d", got, n)
	}

	var rs benchcorpus.RecallStats
	var c *wsclient.Client
	for i, q := range e.queries {
		if i%searchBenchPerConn == 0 {
			c = e.redial(b, c)
		}
		got := e.fetch(b, c, q.Text)
		rs.Add(q, got, searchBenchLimit)
	}
	c.Close()
	e.metrics["recall@10"] = rs.Mean("")
	for _, s := range benchcorpus.Styles {
		e.metrics["recall@10-"+s] = rs.Mean(s)
	}
	return e
}

func (e *searchBenchEnv) start(b *testing.B, o node.Options) {
	n, err := node.New(context.Background(), o)
	if err != nil {
		b.Fatalf("node.New: %v", err)
	}
	e.n, e.r = n, n.Relay()
	e.srv = httptest.NewServer(n.Handler())
	e.url = "ws" + strings.TrimPrefix(e.srv.URL, "http")
}

func (e *searchBenchEnv) redial(b *testing.B, old *wsclient.Client) *wsclient.Client {
	if old != nil {
		old.Close()
	}
	c, err := wsclient.Dial(e.url)
	if err != nil {
		b.Fatalf("dial: %v", err)
	}
	return c
}

// fetch runs one search REQ to EOSE and returns the memory indexes.
func (e *searchBenchEnv) fetch(b *testing.B, c *wsclient.Client, text string) []int {
	evs, closed, err := c.Fetch(nostr.Filter{Kinds: []int{30078}, Search: text, Limit: searchBenchLimit}, testwait.Scaled(30*time.Second))
	if err != nil || closed != "" {
		b.Fatalf("search %q: err %v, CLOSED %q", text, err, closed)
	}
	out := make([]int, 0, len(evs))
	for _, evt := range evs {
		if i, ok := e.byID[evt.ID]; ok {
			out = append(out, i)
		}
	}
	return out
}

func (e *searchBenchEnv) run(b *testing.B) {
	durs := make([]time.Duration, 0, b.N)
	var c *wsclient.Client
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%searchBenchPerConn == 0 {
			b.StopTimer()
			c = e.redial(b, c)
			b.StartTimer()
		}
		q := e.queries[i%len(e.queries)]
		began := time.Now()
		e.fetch(b, c, q.Text)
		durs = append(durs, time.Since(began))
	}
	b.StopTimer()
	c.Close()
	slices.Sort(durs)
	at := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(durs)))) - 1
		return float64(durs[max(i, 0)]) / float64(time.Millisecond)
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.95), "p95-ms")
	for k, v := range e.metrics {
		b.ReportMetric(v, k)
	}
}

// searchBenchPublishWS sends every event over websocket from 4 connections,
// each waiting for its OK before the next; connections are renewed every
// 1000 events to keep the client's frame history short.
func searchBenchPublishWS(b *testing.B, url string, evs []nostr.Event) {
	var wg sync.WaitGroup
	errs := make(chan error, searchBenchConns)
	for p := 0; p < searchBenchConns; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var c *wsclient.Client
			defer func() {
				if c != nil {
					c.Close()
				}
			}()
			for i, sent := p, 0; i < len(evs); i, sent = i+searchBenchConns, sent+1 {
				if sent%1000 == 0 {
					if c != nil {
						c.Close()
					}
					var err error
					if c, err = wsclient.Dial(url); err != nil {
						errs <- err
						return
					}
				}
				if err := c.Publish(context.Background(), evs[i]); err != nil {
					errs <- fmt.Errorf("event %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatalf("publishing: %v", err)
	}
}

// searchBenchPublishInProcess stores every event through r.Publish from as
// many goroutines as there are CPUs.
func searchBenchPublishInProcess(b *testing.B, r *relay.Relay, evs []nostr.Event) {
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(evs); i += workers {
				if err := r.Publish(context.Background(), &evs[i]); err != nil {
					errs <- fmt.Errorf("event %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatalf("storing: %v", err)
	}
}
