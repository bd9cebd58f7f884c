package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/snowclaw/snowclaw/internal/eval/benchcorpus"
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
// linked in the background, and the search latency meanwhile and after;
// once on the graph snapshot Close left, once without it.
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
	began, cpu0 := time.Now(), processCPU()
	for i := 0; i < n; i += 500 {
		mustIndex(t, ix, docs[i:min(i+500, n)]...)
	}
	indexed, indexCPU := time.Since(began), processCPU()-cpu0
	graphWait(ix)
	t.Logf("indexed %d docs in %v (CPU %v: %.0f docs per CPU second); graph linked %v after the last Index call (CPU %v in all)",
		n, indexed.Round(time.Millisecond), indexCPU.Round(time.Millisecond), float64(n)/indexCPU.Seconds(),
		(time.Since(began) - indexed).Round(time.Millisecond), (processCPU() - cpu0).Round(time.Millisecond))
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}

	// Open twice: on the graph snapshot Close wrote, and without it (the
	// vectors linked again from the doc log, as before snapshots).
	for _, snap := range []bool{true, false} {
		if !snap {
			if err := os.Remove(filepath.Join(dir, "vectors-1.snap")); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}
		began, cpu0 = time.Now(), processCPU()
		ix, err = Open(Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		opened, openCPU := time.Since(began), processCPU()-cpu0
		during := timeSearches(t, ix, queries[:100])
		graphWait(ix)
		linked, linkCPU := time.Since(began), processCPU()-cpu0
		after := timeSearches(t, ix, queries[:100])
		t.Logf("snapshot=%v fromSnap=%v: Open %v (CPU %v); graph linked %v after Open began (CPU %v)",
			snap, isFromSnap(ix), opened.Round(time.Millisecond), openCPU.Round(time.Millisecond), linked.Round(time.Millisecond), linkCPU.Round(time.Millisecond))
		t.Logf("search while linking: p50 %v p95 %v; after: p50 %v p95 %v", during[0], during[1], after[0], after[1])
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// processCPU is the CPU time this process has used (user + system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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
