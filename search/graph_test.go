package search

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/snowclaw/snowclaw/internal/benchcorpus"
	"github.com/snowclaw/snowclaw/search/vector"
)

// TestHNSW_Index runs the engine over the graph: a threshold of 0 makes
// every state's index a graph from the first doc.
func TestHNSW_Index(t *testing.T) {
	ix := openTest(t, Options{})
	ix.st.vecs = vector.NewAuto(ix.emb.Dim(), 1, vector.DefaultParams)
	mustIndex(t, ix, memDocs()...)
	if !ix.st.vecs.(*vector.Auto).Wait() {
		t.Fatal("no graph")
	}
	res := search(t, ix, Query{Text: "what language does alice prefer"})
	if len(res) == 0 || res[0].Doc.ID != "c" {
		t.Fatalf("got %v", ids(res))
	}
	if err := ix.Remove(context.Background(), "c"); err != nil {
		t.Fatal(err)
	}
	for _, r := range search(t, ix, Query{Text: "alice prefers short answers german"}) {
		if r.Doc.ID == "c" {
			t.Fatal("removed doc found")
		}
	}
}

func graphWait(ix *Index) {
	ix.mu.RLock()
	x, _ := ix.st.vecs.(*vector.Auto)
	ix.mu.RUnlock()
	if x != nil {
		x.Wait()
	}
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
