package search

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/snowclaw/snowclaw/internal/benchcorpus"
)

// BenchmarkHNSW_Measure prints, on the benchmark corpus embedded by the
// built-in embedder, how long the graph takes to link and, for a few
// search widths, nodes visited, time per search and recall against the
// exact scan, with the queries centred as the engine does; then the same
// for the scan of the codes and the float scan. Manual:
//
//	SNOWCLAW_HNSW_MEASURE=100000 [SNOWCLAW_HNSW_EFS=768,2048] [SNOWCLAW_HNSW_M=16] [SNOWCLAW_HNSW_EFC=160] \
//	  go test ./search/ -run '^$' -bench HNSW_Measure -benchtime 1x -timeout 30m
func BenchmarkHNSW_Measure(t *testing.B) {
	n, _ := strconv.Atoi(os.Getenv("SNOWCLAW_HNSW_MEASURE"))
	if n <= 0 {
		t.Skip("set SNOWCLAW_HNSW_MEASURE=<docs>")
	}
	began := time.Now()
	docs, qs := benchcorpusVectors(t, n, 400)
	t.Logf("embedded %d docs in %v", n, time.Since(began))
	p := defaultHNSW
	if v, err := strconv.Atoi(os.Getenv("SNOWCLAW_HNSW_M")); err == nil {
		p.M = v
	}
	if v, err := strconv.Atoi(os.Getenv("SNOWCLAW_HNSW_EFC")); err == nil {
		p.EfConstruction = v
	}
	exact := flatOf(docs)
	began = time.Now()
	a := testANN(t, docs, p)
	t.Logf("graph of %d (M %d, efConstruction %d) linked in %v", n, p.M, p.EfConstruction, time.Since(began))
	deg := 0
	for i := 0; i < a.g.built; i++ {
		deg += len(a.g.links(uint32(i), 0))
	}
	t.Logf("mean layer-0 degree %.1f", float64(deg)/float64(a.g.built))
	mean := exact.Mean()
	for i, q := range qs {
		qs[i] = centered(q, mean, defaultTuning.center)
	}
	a.p.ScanFactor = 1 // walk, however wide
	for _, ef := range measureEfs() {
		a.p.EfSearch = ef
		for _, k := range []int{10, 100} {
			began = time.Now()
			for _, q := range qs {
				a.Search(q, k)
			}
			per := time.Since(began) / time.Duration(len(qs))
			s := new(scratch)
			for _, q := range qs {
				a.g.search(q, max(ef, k), s)
			}
			t.Logf("efSearch %3d k %3d: %.0f nodes visited per search", ef, k, float64(s.seen)/float64(len(qs)))
			t.Logf("efSearch %3d k %3d: %v per search, recall@%d %.4f (ties counted %.4f)", ef, k, per, k, recallAt(t, exact, a, qs, k), tieRecallAt(exact, a, qs, k))
		}
	}
	for _, k := range []int{10, 100} {
		began = time.Now()
		for _, q := range qs {
			qscan{a}.Search(q, k)
		}
		per := time.Since(began) / time.Duration(len(qs))
		t.Logf("scan of the codes k %d: %v per search, recall@%d %.4f", k, per, k, recallAt(t, exact, qscan{a}, qs, k))
	}
	began = time.Now()
	for _, q := range qs {
		exact.Search(q, 100)
	}
	t.Logf("float scan (flatIndex) k 100: %v per search", time.Since(began)/time.Duration(len(qs)))
}

func measureEfs() []int {
	var out []int
	for _, f := range strings.Split(os.Getenv("SNOWCLAW_HNSW_EFS"), ",") {
		if v, err := strconv.Atoi(f); err == nil {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		out = []int{512, 1024, 1536, 2048, 3072}
	}
	return out
}

// BenchmarkHNSW_Open measures, for an on-disk index of n benchmark docs
// (manual: SNOWCLAW_HNSW_OPEN=<docs>), how far the graph lags behind bulk
// indexing, how long Open takes, how long the graph then takes to be
// linked in the background, and the search latency meanwhile and after.
func BenchmarkHNSW_Open(t *testing.B) {
	n, _ := strconv.Atoi(os.Getenv("SNOWCLAW_HNSW_OPEN"))
	if n <= 0 {
		t.Skip("set SNOWCLAW_HNSW_OPEN=<docs>")
	}
	mems := benchcorpus.Generate(1, n)
	docs := make([]Doc, n)
	for i, m := range mems {
		words := strings.NewReplacer("/", " ", "-", " ", "_", " ").Replace(m.Topic)
		docs[i] = Doc{ID: fmt.Sprintf("m%07d", i), Kind: 30078, CreatedAt: m.CreatedAt, Topic: m.Topic, Text: m.Content + "\n" + words}
	}
	var queries []string
	for _, q := range benchcorpus.Queries(mems, 2, 400) {
		queries = append(queries, q.Text)
	}
	dir := t.TempDir()
	ix, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	for i := 0; i < n; i += 500 {
		mustIndex(t, ix, docs[i:min(i+500, n)]...)
	}
	indexed := time.Since(began)
	graphWait(ix)
	t.Logf("indexed %d docs in %v; graph linked %v after the last Index call", n, indexed, time.Since(began)-indexed)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}

	began = time.Now()
	ix, err = Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	opened := time.Since(began)
	during := timeSearches(t, ix, queries[:100])
	graphWait(ix)
	linked := time.Since(began)
	after := timeSearches(t, ix, queries[:100])
	t.Logf("Open: %v; graph linked %v after Open began", opened, linked)
	t.Logf("search while linking: p50 %v p95 %v; after: p50 %v p95 %v", during[0], during[1], after[0], after[1])
}

func timeSearches(t *testing.B, ix *Index, qs []string) [2]time.Duration {
	var ds []time.Duration
	for _, q := range qs {
		b := time.Now()
		search(t, ix, Query{Text: q, Limit: 10})
		ds = append(ds, time.Since(b))
	}
	slices.Sort(ds)
	return [2]time.Duration{ds[len(ds)/2], ds[len(ds)*95/100]}
}
