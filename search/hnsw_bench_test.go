package search_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/snowclaw/snowclaw/search"
)

// BenchmarkQuerySettled is BenchmarkSearch for our engine, except that
// the vector graph (an index of 20k vectors or more) is fully linked before
// the recall pass and the timed queries. BenchmarkSearch starts querying
// as soon as the last Index call returns, while the graph is still being
// linked in the background; this one measures the steady state:
//
//	go test ./search/ -run='^$' -bench=QuerySettled -benchtime=400x -timeout=30m
//
// s-graph-lag is how long the graph took to finish after the last Index
// call. (Not named BenchmarkSearch…, so that -bench=Search runs only the
// original.)
func BenchmarkQuerySettled(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("docs=%dk", n/1000), func(b *testing.B) {
			d := benchCorpus(n)
			qs := benchQueriesFor(n)
			dir := filepath.Join(b.TempDir(), "ours")
			var st *benchBuilt
			var lag time.Duration
			b.Run("engine=ours", func(b *testing.B) {
				if st == nil {
					st = benchBuild(b, dir, d, qs, func(b *testing.B, dir string, d *benchData) (benchEngine, time.Duration) {
						e, took := buildOurs(b, dir, d)
						began := time.Now()
						search.WaitVectorGraph(e.(*oursEngine).ix)
						lag = time.Since(began)
						return e, took
					})
				}
				benchQueryLoop(b, st.e, qs)
				st.report(b)
				b.ReportMetric(lag.Seconds(), "s-graph-lag")
			})
			if st != nil {
				st.e.close()
			}
		})
	}
}
