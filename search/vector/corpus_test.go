package vector

import "testing"

// The engine's vectors of the benchmark corpus are what the graph's
// parameters are tuned on (DefaultParams), but only the search package can
// make them, and this package's own tests may not import it. So
// corpus_engine_test.go, in package vector_test, which may, fills these in.
var (
	// Corpus embeds the first n benchmark memories as the engine embeds
	// the benchmark's docs, and nq of its queries.
	Corpus func(n, nq int) (docs, queries [][]float32, err error)
	// corpusCenter is how much of the mean doc vector the engine takes
	// off a query (search's default tuning).
	corpusCenter = 1.0
)

// benchcorpusVectors is Corpus, normalised as the engine stores vectors.
func benchcorpusVectors(t testing.TB, n, nq int) (docs, queries [][]float32) {
	t.Helper()
	docs, queries, err := Corpus(n, nq)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range docs {
		Normalize(v)
	}
	for _, v := range queries {
		Normalize(v)
	}
	return docs, queries
}

func TestHNSW_RecallBenchcorpus(t *testing.T) {
	// efSearch 384 at 20k does about what the default does at 100k.
	if testing.Short() || raceEnabled {
		// A measure of quality, not of concurrency: below 4,096 vectors
		// the graph links serially anyway. .ci/run runs it at full size.
		t.Skip("recall at 20k vectors: go test ./search/vector/ without -short and -race")
	}
	n, p := 20000, DefaultParams
	p.EfSearch, p.ScanFactor = 384, 4
	docs, qs := benchcorpusVectors(t, n, 200)
	exact := flatOf(docs)
	a := testANN(t, docs, p)
	graphUsed(t, a, 100)
	// As the engine asks: the query less the mean doc vector.
	mean := exact.Mean()
	cq := make([][]float32, len(qs))
	for i, q := range qs {
		cq[i] = Centered(q, mean, corpusCenter)
	}
	for _, tc := range []struct {
		name string
		qs   [][]float32
		k    int
	}{{"raw", qs, 10}, {"centred", cq, 10}, {"centred", cq, 100}} {
		r := recallAt(t, exact, a, tc.qs, tc.k)
		t.Logf("benchcorpus %d, %s queries: recall@%d %.4f", n, tc.name, tc.k, r)
		if r < 0.95 {
			t.Errorf("%s recall@%d %.4f < 0.95", tc.name, tc.k, r)
		}
		// The scan of the codes (pending vectors, wide searches) is as
		// good as exact, but for the order of hits whose exact scores are
		// closer than the codes' rounding (a score moves by 1.2e-3 at the
		// 99th percentile on this corpus, so two by twice that).
		r = recallAt(t, exact, qscan{a}, tc.qs, tc.k)
		rw := recallWithin(exact, qscan{a}, tc.qs, tc.k, 2.5e-3)
		t.Logf("scan of the codes: recall@%d %.4f, %.4f counting near-ties", tc.k, r, rw)
		if r < 0.98 || rw < 0.999 {
			t.Errorf("%s: scan of the codes recall@%d %.4f < 0.98 or %.4f < 0.999 with near-ties", tc.name, tc.k, r, rw)
		}
	}
}
