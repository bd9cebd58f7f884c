package search_test

// Benchmarks for NIP-50 search (nothing here runs without -bench):
//
//	go test ./search/ -run='^$' -bench='Index/.*/batch=500' -benchtime=20000x
//	go test ./search/ -run='^$' -bench='Index/.*/batch=1$' -benchtime=2000x
//	go test ./search/ -run='^$' -bench=Search -benchtime=400x -timeout=60m
//
// (-benchtime=400x runs the 400-query set once.) Both run our engine (bleve
// BM25 + built-in embedder vectors) and, on the same synthetic memories
// (internal/eval/benchcorpus), eventstore's bluge backend over a badger raw
// store, as a stock NIP-50 relay would use it.
// Our docs are made from the memories as plugins/memsearch makes them from
// kind 30078 snow:memory:<topic> events (text plus topic words); bluge
// indexes the event content, as its backend does. Searches ask for 10
// results. The timed query loop runs under the pprof label bench=query, so
// a -cpuprofile can be narrowed to it: go tool pprof -tagfocus=bench=query.

import (
	"context"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blugelabs/bluge"
	"github.com/dgraph-io/badger/v4"
	badgerstore "github.com/fiatjaf/eventstore/badger"
	blugestore "github.com/fiatjaf/eventstore/bluge"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/internal/eval/benchcorpus"
	"github.com/snowclaw/snowclaw/search"
)

const (
	benchSeed       = 1
	benchQuerySeed  = 2
	benchQueries    = 400 // 100 per style
	benchLimit      = 10  // results per search; recall is recall@10
	benchIndexBatch = 500 // docs per Index call when building, as memsearch's catch-up
	benchPubkey     = "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
)

// benchData is the first n memories as events and as our docs. The corpus
// is prefix-stable, so the largest one generated serves every smaller n.
type benchData struct {
	mems   []benchcorpus.Memory
	events []*nostr.Event
	docs   []search.Doc
	byID   map[string]int // event id → memory index
}

var (
	benchMu   sync.Mutex
	benchAll  *benchData
	benchQSet = map[int][]benchcorpus.Query{}
)

func benchCorpus(n int) *benchData {
	benchMu.Lock()
	defer benchMu.Unlock()
	if benchAll == nil || len(benchAll.mems) < n {
		mems := benchcorpus.Generate(benchSeed, n)
		d := &benchData{mems: mems, events: make([]*nostr.Event, n), docs: make([]search.Doc, n), byID: make(map[string]int, n)}
		for i, m := range mems {
			evt := &nostr.Event{
				PubKey:    benchPubkey,
				CreatedAt: nostr.Timestamp(m.CreatedAt),
				Kind:      30078,
				Tags:      nostr.Tags{{"d", "snow:memory:" + m.Topic}},
				Content:   m.Content,
			}
			evt.ID = evt.GetID()
			evt.Sig = strings.Repeat("0", 128) // stores do not verify
			d.events[i] = evt
			d.docs[i] = benchDoc(evt, m.Topic)
			d.byID[evt.ID] = i
		}
		benchAll = d
	}
	return &benchData{mems: benchAll.mems[:n], events: benchAll.events[:n], docs: benchAll.docs[:n], byID: benchAll.byID}
}

func benchQueriesFor(n int) []benchcorpus.Query {
	d := benchCorpus(n)
	benchMu.Lock()
	defer benchMu.Unlock()
	qs, ok := benchQSet[n]
	if !ok {
		qs = benchcorpus.Queries(d.mems, benchQuerySeed, benchQueries)
		benchQSet[n] = qs
	}
	return qs
}

// benchDoc is what plugins/memsearch makes of a public snow:memory event
// with plain content: the text is the content plus the topic's words.
func benchDoc(evt *nostr.Event, topic string) search.Doc {
	d := evt.Tags.GetD()
	words := strings.NewReplacer("/", " ", "-", " ", "_", " ").Replace(topic)
	return search.Doc{
		ID:        evt.ID,
		Kind:      evt.Kind,
		Pubkey:    evt.PubKey,
		CreatedAt: int64(evt.CreatedAt),
		D:         d,
		Topic:     topic,
		Text:      strings.TrimSpace(evt.Content + "\n" + words),
		Tags:      map[string][]string{"d": {d}},
		Tier:      "public",
		Source:    evt.PubKey,
	}
}

// benchEngine is a built index under test.
type benchEngine interface {
	// search returns the memory indexes of the hits in rank order.
	search(ctx context.Context, text string, limit int) ([]int, error)
	close()
}

type oursEngine struct {
	ix       *search.Index
	byID     map[string]int
	readable func(string) bool
}

func (e *oursEngine) search(ctx context.Context, text string, limit int) ([]int, error) {
	res, err := e.ix.Search(ctx, search.Query{Text: text, Limit: limit, Readable: e.readable})
	out := make([]int, len(res))
	for i, r := range res {
		out[i] = e.byID[r.Doc.ID]
	}
	return out, err
}

func (e *oursEngine) close() { _ = e.ix.Close() }

func openOurs(b *testing.B, dir string) *search.Index {
	return openOursWith(b, search.Options{Dir: dir})
}

func openOursWith(b *testing.B, o search.Options) *search.Index {
	ix, err := search.Open(o)
	if err != nil {
		b.Fatalf("search.Open: %v", err)
	}
	return ix
}

func buildOurs(b *testing.B, dir string, d *benchData) (benchEngine, time.Duration) {
	return buildOursWith(b, search.Options{Dir: dir}, d)
}

// buildOursReader is our engine searched as a reader who is not the agent:
// the scope filter is on (every doc is in a readable scope), which is the
// path every client's search takes (exact vector scan, no graph walk).
func buildOursReader(b *testing.B, dir string, d *benchData) (benchEngine, time.Duration) {
	e, took := buildOurs(b, dir, d)
	e.(*oursEngine).readable = func(string) bool { return true }
	return e, took
}

// buildOursBM25 is our engine with the vector list turned off (BM25 alone,
// still trust-weighted): what the vectors add to recall and cost in time.
func buildOursBM25(b *testing.B, dir string, d *benchData) (benchEngine, time.Duration) {
	return buildOursWith(b, search.Options{Dir: dir, BM25Weight: 1, VectorWeight: 0}, d)
}

func buildOursWith(b *testing.B, o search.Options, d *benchData) (benchEngine, time.Duration) {
	ix := openOursWith(b, o)
	began := time.Now()
	for i := 0; i < len(d.docs); i += benchIndexBatch {
		if err := ix.Index(context.Background(), d.docs[i:min(i+benchIndexBatch, len(d.docs))]...); err != nil {
			b.Fatalf("Index: %v", err)
		}
	}
	return &oursEngine{ix: ix, byID: d.byID}, time.Since(began)
}

type blugeEngine struct {
	raw  *badgerstore.BadgerBackend
	bl   *blugestore.BlugeBackend
	byID map[string]int
}

func (e *blugeEngine) search(ctx context.Context, text string, limit int) ([]int, error) {
	ch, err := e.bl.QueryEvents(ctx, nostr.Filter{Search: text, Limit: limit})
	if err != nil {
		return nil, err
	}
	var out []int
	for evt := range ch {
		out = append(out, e.byID[evt.ID])
	}
	return out, nil
}

func (e *blugeEngine) close() {
	e.bl.Close()
	e.raw.Close()
}

func openBenchBadger(b *testing.B, dir string) *badgerstore.BadgerBackend {
	raw := &badgerstore.BadgerBackend{
		Path:                  filepath.Join(dir, "events"),
		BadgerOptionsModifier: func(o badger.Options) badger.Options { return o.WithLogger(nil) },
	}
	if err := raw.Init(); err != nil {
		b.Fatalf("badger: %v", err)
	}
	return raw
}

func openBluge(b *testing.B, dir string) *blugeEngine {
	raw := openBenchBadger(b, dir)
	bl := &blugestore.BlugeBackend{Path: filepath.Join(dir, "bluge"), RawEventStore: raw}
	if err := bl.Init(); err != nil {
		raw.Close()
		b.Fatalf("bluge: %v", err)
	}
	return &blugeEngine{raw: raw, bl: bl}
}

// buildBluge fills the raw store (untimed), then builds the bluge index in
// batches of 500 with the documents the backend's SaveEvent makes, and
// opens the backend on it. (SaveEvent itself writes one event per bluge
// batch and is far slower: BenchmarkIndex/engine=bluge/batch=1.)
func buildBluge(b *testing.B, dir string, d *benchData) (benchEngine, time.Duration) {
	ctx := context.Background()
	raw := openBenchBadger(b, dir)
	for _, evt := range d.events {
		if err := raw.SaveEvent(ctx, evt); err != nil {
			raw.Close()
			b.Fatalf("badger SaveEvent: %v", err)
		}
	}
	path := filepath.Join(dir, "bluge")
	began := time.Now()
	if err := blugeBatchIndex(path, d.events); err != nil {
		raw.Close()
		b.Fatalf("bluge: %v", err)
	}
	took := time.Since(began)
	bl := &blugestore.BlugeBackend{Path: path, RawEventStore: raw}
	if err := bl.Init(); err != nil {
		raw.Close()
		b.Fatalf("bluge: %v", err)
	}
	return &blugeEngine{raw: raw, bl: bl, byID: d.byID}, took
}

// blugeBatchIndex adds events to the bluge index at path in batches of
// 500 and closes it.
func blugeBatchIndex(path string, events []*nostr.Event) error {
	w, err := bluge.OpenWriter(bluge.DefaultConfig(path))
	if err != nil {
		return err
	}
	for i := 0; i < len(events); i += benchIndexBatch {
		batch := bluge.NewBatch()
		for _, evt := range events[i:min(i+benchIndexBatch, len(events))] {
			doc := blugeDoc(evt)
			batch.Update(doc.ID(), doc)
		}
		if err := w.Batch(batch); err != nil {
			_ = w.Close()
			return err
		}
	}
	return w.Close()
}

// blugeDoc is the document eventstore/bluge's SaveEvent (v0.16.2) writes
// for evt, field for field.
func blugeDoc(evt *nostr.Event) *bluge.Document {
	id, _ := hex.DecodeString(evt.ID)
	doc := &bluge.Document{bluge.NewKeywordFieldBytes("i", id).Sortable().StoreValue()}
	doc.AddField(bluge.NewTextField("c", evt.Content))
	doc.AddField(bluge.NewTextField("k", strconv.Itoa(evt.Kind)))
	doc.AddField(bluge.NewTextField("p", evt.PubKey[56:]))
	doc.AddField(bluge.NewNumericField("a", float64(evt.CreatedAt)))
	return doc
}

var benchEngines = []struct {
	name  string
	build func(*testing.B, string, *benchData) (benchEngine, time.Duration)
}{
	{"ours", buildOurs},
	{"ours-bm25", buildOursBM25},
	{"ours-reader", buildOursReader},
	{"bluge", buildBluge},
}

// BenchmarkIndex measures indexing throughput on b.N fresh memories into an
// empty on-disk index, in batches of 500 (ours: Index calls, as a rebuild
// or catch-up makes them; bluge: writer batches of SaveEvent's documents)
// and one at a time (ours: one Index call per doc, as for a live EVENT;
// bluge: the backend's SaveEvent).
func BenchmarkIndex(b *testing.B) {
	b.Run("engine=ours/batch=500", func(b *testing.B) { benchIndexOurs(b, benchIndexBatch) })
	b.Run("engine=ours/batch=1", func(b *testing.B) { benchIndexOurs(b, 1) })
	b.Run("engine=bluge/batch=500", func(b *testing.B) {
		d := benchCorpus(b.N)
		path := filepath.Join(b.TempDir(), "bluge")
		b.ResetTimer()
		began := time.Now()
		if err := blugeBatchIndex(path, d.events); err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(began)
		b.StopTimer()
		b.ReportMetric(float64(b.N)/elapsed.Seconds(), "docs/s")
	})
	b.Run("engine=bluge/batch=1", func(b *testing.B) {
		d := benchCorpus(b.N)
		e := openBluge(b, b.TempDir())
		defer e.close()
		ctx := context.Background()
		b.ResetTimer()
		began := time.Now()
		for _, evt := range d.events {
			if err := e.bl.SaveEvent(ctx, evt); err != nil {
				b.Fatal(err)
			}
		}
		elapsed := time.Since(began)
		b.StopTimer()
		b.ReportMetric(float64(b.N)/elapsed.Seconds(), "docs/s")
	})
}

func benchIndexOurs(b *testing.B, batch int) {
	d := benchCorpus(b.N)
	ix := openOurs(b, b.TempDir())
	defer ix.Close()
	ctx := context.Background()
	b.ResetTimer()
	began := time.Now()
	for i := 0; i < len(d.docs); i += batch {
		if err := ix.Index(ctx, d.docs[i:min(i+batch, len(d.docs))]...); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(began)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "docs/s")
}

// BenchmarkSearch builds each engine's index of 10k and 100k memories once
// (outside the timer, in batches), then runs b.N searches cycling through
// the query set and reports the latency percentiles, recall@10 over the
// whole query set (overall and per query style), the build rate, and the
// process RSS after the build (MB-rss) and what the build added to it
// (MB-rss-index), both after a forced GC. Engines: ours (BM25 + vectors,
// the default), ours-bm25 (vector weight 0) and bluge. For bluge the RSS
// includes its badger raw store, which it needs to answer at all.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("docs=%dk", n/1000), func(b *testing.B) {
			d := benchCorpus(n)
			qs := benchQueriesFor(n)
			for _, eng := range benchEngines {
				dir := filepath.Join(b.TempDir(), eng.name)
				var st *benchBuilt // built by the first run of the sub-benchmark, reused by the next
				b.Run("engine="+eng.name, func(b *testing.B) {
					if st == nil {
						st = benchBuild(b, dir, d, qs, eng.build)
					}
					benchQueryLoop(b, st.e, qs)
					st.report(b)
				})
				if st != nil {
					st.e.close()
				}
			}
		})
	}
}

type benchBuilt struct {
	e              benchEngine
	docsPerSec     float64
	rss, rssBefore float64 // MB
	recall         benchcorpus.RecallStats
}

func benchBuild(b *testing.B, dir string, d *benchData, qs []benchcorpus.Query, build func(*testing.B, string, *benchData) (benchEngine, time.Duration)) *benchBuilt {
	b.StopTimer()
	defer b.StartTimer()
	st := &benchBuilt{rssBefore: benchRSS()}
	e, took := build(b, dir, d)
	st.e = e
	st.docsPerSec = float64(len(d.docs)) / took.Seconds()
	st.rss = benchRSS()
	ctx := context.Background()
	for _, q := range qs {
		got, err := e.search(ctx, q.Text, benchLimit)
		if err != nil {
			b.Fatalf("search %q: %v", q.Text, err)
		}
		st.recall.Add(q, got, benchLimit)
	}
	return st
}

func (st *benchBuilt) report(b *testing.B) {
	b.ReportMetric(st.docsPerSec, "build-docs/s")
	if st.rss > 0 {
		b.ReportMetric(st.rss, "MB-rss")
		b.ReportMetric(st.rss-st.rssBefore, "MB-rss-index")
	}
	b.ReportMetric(st.recall.Mean(""), "recall@10")
	for _, s := range benchcorpus.Styles {
		b.ReportMetric(st.recall.Mean(s), "recall@10-"+s)
	}
}

// benchQueryLoop times each of b.N searches and reports p50 and p95.
func benchQueryLoop(b *testing.B, e benchEngine, qs []benchcorpus.Query) {
	durs := make([]time.Duration, 0, b.N)
	var failed error
	b.ResetTimer()
	pprof.Do(context.Background(), pprof.Labels("bench", "query"), func(ctx context.Context) {
		for i := 0; i < b.N; i++ {
			q := qs[i%len(qs)]
			began := time.Now()
			if _, err := e.search(ctx, q.Text, benchLimit); err != nil && failed == nil {
				failed = fmt.Errorf("search %q: %w", q.Text, err)
			}
			durs = append(durs, time.Since(began))
		}
	})
	b.StopTimer()
	if failed != nil {
		b.Fatal(failed)
	}
	benchReportPercentiles(b, durs)
}

// benchReportPercentiles reports the nearest-rank p50 and p95 in ms.
func benchReportPercentiles(b *testing.B, durs []time.Duration) {
	if len(durs) == 0 {
		return
	}
	slices.Sort(durs)
	at := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(durs)))) - 1
		return float64(durs[max(i, 0)]) / float64(time.Millisecond)
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.95), "p95-ms")
}

// benchRSS is VmRSS in MB after a forced GC that also returns freed memory
// to the OS; 0 where there is no /proc.
func benchRSS() float64 {
	runtime.GC()
	debug.FreeOSMemory()
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest) // "123456 kB"
			if len(f) >= 1 {
				kb, err := strconv.ParseFloat(f[0], 64)
				if err == nil {
					return kb / 1024
				}
			}
		}
	}
	return 0
}
