package vector

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
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
	p := DefaultParams
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
		qs[i] = Centered(q, mean, corpusCenter)
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
				a.g.search(q, max(ef, k), s, nil)
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
