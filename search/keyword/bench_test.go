package keyword

import (
	"fmt"
	"strings"
	"testing"

	"github.com/snowclaw/snowclaw/internal/eval/benchcorpus"
)

// BenchmarkSearch ranks the benchmark corpus's queries (internal/
// benchcorpus) over 100k of its memories in one part at depth 100, as the
// search package's first pass asks, and reports how many docs were scored
// per query against the postings their terms hold, and the exhaustive
// loop it replaced (score every doc, then sort) in the same run.
//
//	go test ./search/keyword/ -run '^$' -bench Search
func BenchmarkSearch(b *testing.B) {
	a, err := NewAnalyzer()
	if err != nil {
		b.Fatal(err)
	}
	mems := benchcorpus.Generate(1, 100_000)
	p := NewPostings()
	ids := make([]string, len(mems))
	an := AnalyseAll(a, len(mems), func(i int) string {
		return mems[i].Content + "\n" + strings.ReplaceAll(mems[i].Topic, "/", " ")
	})
	for i := range mems {
		ids[p.Add(an[i])] = fmt.Sprint("m", i)
	}
	var queries [][]Term
	for _, q := range benchcorpus.Queries(mems, 2, 400) {
		var ts []Term
		for _, t := range Analyse(a, q.Text).Terms {
			ts = append(ts, Term{Term: t.Term, Weight: float64(t.N)})
		}
		queries = append(queries, ts)
	}
	id := func(_ int, s uint32) string { return ids[s] }
	b.Run("maxscore", func(b *testing.B) {
		b.ReportAllocs()
		var st Stats
		for i := 0; b.Loop(); i++ {
			Search([]*Postings{p}, queries[i%len(queries)], 100, id, &st)
		}
		b.ReportMetric(float64(st.Scored)/float64(b.N), "scored/op")
		b.ReportMetric(float64(st.Postings)/float64(b.N), "postings/op")
	})
	b.Run("exhaustive", func(b *testing.B) { // the loop Search replaced
		for i := 0; b.Loop(); i++ {
			exhaustive([]*Postings{p}, queries[i%len(queries)], 100, id)
		}
	})
}
