package node_test

// What a layered search costs against a loopback snowclaw remote (nothing
// here runs without -bench):
//
//	go test ./cmd/snowclaw/internal/node/ -run='^$' -bench=RemoteLayered -benchtime=400x
//
// The remote is a snowclaw with search holding 2,000 of
// internal/eval/benchcorpus's memories; the local relay holds 2,000 others and
// lists the remote with trust 1. b.N searches (REQ with search and limit
// 10, to EOSE, over websocket on fresh connections every 20 queries)
// cycle through 400 corpus queries:
//
//	local:            the query alone (no include:remote), for reference;
//	layered/cached:   with include:remote, every answer of the remote
//	                  already in the cache (one warm-up pass, untimed);
//	layered/uncached: with include:remote on a relay whose cache keeps one
//	                  answer, so every search asks the remote (NIP-11 is
//	                  kept an hour, as in steady state).
//
// p50/p95 are per REQ → EOSE; cpu-ms/op is the process's CPU time per
// search (relay, remote and client: they share the process), the figure
// that holds still on a loaded machine.

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/internal/eval/benchcorpus"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/internal/wsclient"
	"github.com/snowclaw/snowclaw/plugins/remotesearch"
	"github.com/snowclaw/snowclaw/relay"
)

const remoteBenchMemories = 2000

func BenchmarkRemoteLayered(b *testing.B) {
	mems := benchcorpus.Generate(searchBenchSeed, 2*remoteBenchMemories)
	queries := benchcorpus.Queries(mems, searchBenchQuerySeed, searchBenchQueries)
	evs := searchBenchEvents(b, mems)
	newKeys := func() relay.Keys {
		return relay.Keys{RelaySecret: nostr.GeneratePrivateKey(), AgentSecret: nostr.GeneratePrivateKey()}
	}

	far := &searchBenchEnv{}
	far.start(b, searchBenchOptions(b.TempDir(), newKeys(), true))
	defer far.stop()
	searchBenchPublishInProcess(b, far.r, evs[remoteBenchMemories:])

	layered := func(cacheEntries int) *searchBenchEnv {
		o := searchBenchOptions(b.TempDir(), newKeys(), true)
		o.Remote.Remotes = []remotesearch.Remote{{URL: far.url, Trust: 1}}
		o.Remote.Timeout = 10 * time.Second
		o.Remote.CacheEntries = cacheEntries
		e := &searchBenchEnv{}
		e.start(b, o)
		searchBenchPublishInProcess(b, e.r, evs[:remoteBenchMemories])
		return e
	}
	cached, uncached := layered(2*searchBenchQueries), layered(1)
	defer cached.stop()
	defer uncached.stop()
	// warm the cache: every query's remote answer; the remote's memories
	// must be among the results, or this measures nothing
	remoteIDs := map[string]bool{}
	for _, evt := range evs[remoteBenchMemories:] {
		remoteIDs[evt.ID] = true
	}
	fromRemote := 0
	c := cached.redial(b, nil)
	for i, q := range queries {
		if i%searchBenchPerConn == 0 {
			c = cached.redial(b, c)
		}
		for _, evt := range remoteBenchFetch(b, c, q.Text+" include:remote") {
			if remoteIDs[evt.ID] {
				fromRemote++
			}
		}
	}
	c.Close()
	if fromRemote == 0 {
		b.Fatal("no layered search returned a remote memory")
	}

	for _, bc := range []struct {
		name   string
		env    *searchBenchEnv
		suffix string
	}{
		{"local", cached, ""},
		{"layered/cached", cached, " include:remote"},
		{"layered/uncached", uncached, " include:remote"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			durs := make([]time.Duration, 0, b.N)
			var c *wsclient.Client
			cpuBegan, haveCPU := benchCPUTime()
			for i := 0; i < b.N; i++ {
				if i%searchBenchPerConn == 0 {
					b.StopTimer()
					c = bc.env.redial(b, c)
					b.StartTimer()
				}
				began := time.Now()
				remoteBenchFetch(b, c, queries[i%len(queries)].Text+bc.suffix)
				durs = append(durs, time.Since(began))
			}
			cpuEnded, _ := benchCPUTime()
			b.StopTimer()
			c.Close()
			if haveCPU {
				// the whole process: relay, remote and client (dials included)
				b.ReportMetric(float64((cpuEnded-cpuBegan).Microseconds())/1000/float64(b.N), "cpu-ms/op")
			}
			slices.Sort(durs)
			at := func(p float64) float64 {
				i := int(math.Ceil(p*float64(len(durs)))) - 1
				return float64(durs[max(i, 0)]) / float64(time.Millisecond)
			}
			b.ReportMetric(at(0.50), "p50-ms")
			b.ReportMetric(at(0.95), "p95-ms")
		})
	}
}

func remoteBenchFetch(b *testing.B, c *wsclient.Client, text string) []*nostr.Event {
	evs, closed, err := c.Fetch(nostr.Filter{Kinds: []int{30078}, Search: text, Limit: searchBenchLimit}, testwait.Scaled(30*time.Second))
	if err != nil || closed != "" {
		b.Fatalf("search %q: err %v, CLOSED %q", text, err, closed)
	}
	return evs
}
