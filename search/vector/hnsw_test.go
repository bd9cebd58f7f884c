package vector

import (
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

func randomUnit(rng *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for j := range v {
		v[j] = float32(rng.NormFloat64())
	}
	Normalize(v)
	return v
}

// testANN builds an annIndex over vecs (ids "0", "1", …) and waits for the
// graph.
func testANN(t testing.TB, vecs [][]float32, p Params) *annIndex {
	t.Helper()
	f := newFlatIndex(len(vecs[0]))
	for i, v := range vecs {
		f.Add(strconv.Itoa(i), v)
	}
	a := newANNFromFlat(f, p, new(atomic.Bool))
	a.wait()
	return a
}

// recallAt is the share of the exact top k that the index returns in its
// top k, over the queries.
func recallAt(t testing.TB, exact, approx Index, qs [][]float32, k int) float64 {
	t.Helper()
	found, total := 0, 0
	for _, q := range qs {
		want := exact.Search(q, k)
		got := map[string]bool{}
		for _, h := range approx.Search(q, k) {
			got[h.ID] = true
		}
		for _, h := range want {
			total++
			if got[h.ID] {
				found++
			}
		}
	}
	return float64(found) / float64(total)
}

// tieRecallAt counts a returned hit as right when it scores at least the
// exact k-th best: with near-duplicate docs, which of the tied ones make
// the top k is arbitrary.
func tieRecallAt(exact, approx Index, qs [][]float32, k int) float64 {
	found, total := 0, 0
	for _, q := range qs {
		want := exact.Search(q, k)
		if len(want) == 0 {
			continue
		}
		kth := want[len(want)-1].Score
		total += len(want)
		for _, h := range approx.Search(q, k) {
			if h.Score >= kth-1e-6 {
				found++
			}
		}
	}
	return float64(found) / float64(total)
}

// recallWithin counts a returned hit as right when its exact score is
// within tol of the exact k-th best's or above: an index that scores on
// the codes (quant.go) may order hits that close either way.
func recallWithin(exact *flatIndex, approx Index, qs [][]float32, k int, tol float64) float64 {
	found, total := 0, 0
	for _, q := range qs {
		want := exact.Search(q, k)
		if len(want) == 0 {
			continue
		}
		kth := want[len(want)-1].Score
		total += len(want)
		for _, h := range approx.Search(q, k) {
			if v, ok := exact.Get(h.ID); ok && float64(Dot(q, v)) >= kth-tol {
				found++
			}
		}
	}
	return float64(found) / float64(total)
}

func flatOf(vecs [][]float32) *flatIndex {
	f := newFlatIndex(len(vecs[0]))
	for i, v := range vecs {
		f.Add(strconv.Itoa(i), v)
	}
	return f
}

// graphUsed fails unless a search for k walks a's graph (rather than
// scanning everything, as it does when k is a large share of the vectors).
func graphUsed(t *testing.T, a *annIndex, k int) {
	t.Helper()
	if max(a.p.EfSearch, k)*a.p.ScanFactor >= a.g.built || a.g.len()-a.g.built >= hnswBatch {
		t.Fatalf("search for %d of %d would not use the graph", k, a.Len())
	}
}

func TestHNSW_RecallRandom(t *testing.T) {
	if testing.Short() || raceEnabled {
		// as TestHNSW_RecallBenchcorpus: quality, measured at full size
		t.Skip("recall at 10k vectors: go test ./search/vector/ without -short and -race")
	}
	for _, tc := range []struct{ n, dim, ef int }{
		{10000, 32, 128},
		{10000, 64, 384},
	} {
		rng := rand.New(rand.NewSource(7))
		vecs := make([][]float32, tc.n)
		for i := range vecs {
			vecs[i] = randomUnit(rng, tc.dim)
		}
		qs := make([][]float32, 200)
		for i := range qs {
			qs[i] = randomUnit(rng, tc.dim)
		}
		p := DefaultParams
		p.EfSearch, p.ScanFactor = tc.ef, 4
		a := testANN(t, vecs, p)
		graphUsed(t, a, 10)
		r := recallAt(t, flatOf(vecs), a, qs, 10)
		t.Logf("random %d×%d, efSearch %d: recall@10 %.4f", tc.n, tc.dim, tc.ef, r)
		if r < 0.95 {
			t.Errorf("random %d×%d: recall@10 %.4f < 0.95", tc.n, tc.dim, r)
		}
	}
}

// smallHNSW is for the tests of a few thousand vectors: with the defaults
// a search of so few would scan rather than walk the graph.
var smallHNSW = Params{M: 16, EfConstruction: 100, EfSearch: 64, ScanFactor: 4, Seed: 1}

func TestHNSW_Deterministic(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	vecs := make([][]float32, hnswSerialBelow+1003) // some linked in batches, some pending
	for i := range vecs {
		vecs[i] = randomUnit(rng, 8) // the graph's shape, not its quality
	}
	a := testANN(t, vecs, smallHNSW)
	// The batches are planned in parallel, but not as many as there are
	// cores: one core makes the same graph.
	was := runtime.GOMAXPROCS(1)
	b := testANN(t, vecs, smallHNSW)
	runtime.GOMAXPROCS(was)
	if fmt.Sprint(a.g.link0, a.g.upper, a.g.upperAt, a.g.levels, a.g.entry) != fmt.Sprint(b.g.link0, b.g.upper, b.g.upperAt, b.g.levels, b.g.entry) {
		t.Fatal("same insertion order, different graphs")
	}
	q := randomUnit(rng, 8)
	if fmt.Sprint(a.Search(q, 20)) != fmt.Sprint(b.Search(q, 20)) {
		t.Fatal("same graphs, different results")
	}
}

func TestHNSW_SearchScoresAndOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	vecs := make([][]float32, 3000)
	for i := range vecs {
		vecs[i] = randomUnit(rng, 32)
	}
	a := testANN(t, vecs, smallHNSW)
	graphUsed(t, a, 10)
	q := vecs[17]
	hits := a.Search(q, 10)
	if len(hits) != 10 || hits[0].ID != "17" {
		t.Fatalf("hits %v", hits)
	}
	for i, h := range hits {
		v, _ := a.Get(h.ID)
		if h.Score != float64(Dot(q, v)) {
			t.Fatalf("hit %d score %v, dot %v", i, h.Score, Dot(q, v))
		}
		if i > 0 && h.Score > hits[i-1].Score {
			t.Fatalf("not sorted: %v", hits)
		}
	}
	// A search too wide to pay off walking scans all the codes and finds
	// the exact result.
	exact := flatOf(vecs)
	if err := codeClose(a.Search(q, 1000), exact.Search(q, 1000), exact, q); err != "" {
		t.Fatal("wide search differs from the exact one: " + err)
	}
}

// codeTol is how far a dot product of unit vectors moves when one of them
// is stored as its 8-bit code (quant.go), with room to spare: at 32
// dimensions a step is about 1/300 of a component.
const codeTol = 4e-3

// stored is v as the graph stores it: its code times its scale.
func stored(v []float32) []float32 {
	code := make([]int8, len(v))
	out := make([]float32, len(v))
	decode(out, code, quantize(v, code))
	return out
}

// codeClose compares an index's hits with the exact (float) ones: the
// same number, the i-th scores within codeTol, and each hit's score within
// codeTol of its exact dot product. Ranks may differ only among hits
// closer than that. It returns "" when they agree.
func codeClose(got, want []Hit, exact *flatIndex, q []float32) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d hits, want %d", len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(got[i].Score - want[i].Score); d > codeTol {
			return fmt.Sprintf("hit %d scores %v, exact %v", i, got[i].Score, want[i].Score)
		}
		v, ok := exact.Get(got[i].ID)
		if !ok {
			return "unknown id " + got[i].ID
		}
		if d := math.Abs(got[i].Score - float64(Dot(q, v))); d > codeTol {
			return fmt.Sprintf("hit %s scores %v, its exact dot is %v", got[i].ID, got[i].Score, Dot(q, v))
		}
	}
	return ""
}

func TestHNSW_Remove(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	n, dim := 3000, 32
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = randomUnit(rng, dim)
	}
	a := testANN(t, vecs, smallHNSW)
	a.compactMin = 1 << 30 // no compaction here
	exact := flatOf(vecs)
	for i := 0; i < n; i += 3 {
		a.Remove(strconv.Itoa(i))
		exact.Remove(strconv.Itoa(i))
	}
	graphUsed(t, a, 20)
	a.Remove("nonexistent")
	if a.Len() != exact.Len() {
		t.Fatalf("Len %d, want %d", a.Len(), exact.Len())
	}
	if _, ok := a.Get("3"); ok {
		t.Fatal("removed vector still there")
	}
	qs := make([][]float32, 100)
	for i := range qs {
		qs[i] = randomUnit(rng, dim)
	}
	for _, q := range qs {
		for _, h := range a.Search(q, 20) {
			if id, _ := strconv.Atoi(h.ID); id%3 == 0 {
				t.Fatalf("removed %s returned", h.ID)
			}
		}
	}
	if r := recallAt(t, exact, a, qs, 10); r < 0.95 {
		t.Fatalf("recall@10 after removals %.4f", r)
	}
	checkMean(t, a, exact)
	// Re-adding the same id with another vector replaces it.
	v := randomUnit(rng, dim)
	a.Add("1", v)
	exact.Add("1", v)
	if h := a.Search(v, 1); len(h) != 1 || h[0].ID != "1" {
		t.Fatalf("replaced vector not found: %v", h)
	}
	if a.Len() != exact.Len() {
		t.Fatalf("Len %d after replace, want %d", a.Len(), exact.Len())
	}
	// Re-adding it unchanged keeps the node, and so does replacing it
	// with itself as the Index does, by Remove and Add.
	nodes := a.g.len()
	a.Add("1", v)
	a.Remove("1")
	a.Add("1", v)
	if a.g.len() != nodes || a.Len() != exact.Len() {
		t.Fatalf("unchanged re-add made a node: %d nodes, was %d", a.g.len(), nodes)
	}
	if h := a.Search(v, 1); len(h) != 1 || h[0].ID != "1" {
		t.Fatalf("revived vector not found: %v", h)
	}
	checkMean(t, a, exact)
}

func checkMean(t *testing.T, a, want Index) {
	t.Helper()
	m, w := a.Mean(), want.Mean()
	if len(m) != len(w) {
		t.Fatalf("mean of %d dims, want %d", len(m), len(w))
	}
	for i := range m {
		if d := m[i] - w[i]; d > 1e-4 || d < -1e-4 {
			t.Fatalf("mean[%d] = %v, want %v", i, m[i], w[i])
		}
	}
}

func TestHNSW_Compaction(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	n, dim := 4000, 16
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = randomUnit(rng, dim)
	}
	a := testANN(t, vecs, smallHNSW)
	a.compactMin = 100
	exact := flatOf(vecs)
	// Remove half, re-adding some with new vectors as it goes: a quarter
	// dead starts a compaction, which then has to catch up with the rest.
	for i := 0; i < n; i += 2 {
		id := strconv.Itoa(i)
		if i%10 == 0 {
			v := randomUnit(rng, dim)
			a.Add(id, v)
			exact.Add(id, v)
			continue
		}
		a.Remove(id)
		exact.Remove(id)
	}
	a.wait()
	if a.sh != nil || a.g.len()-a.g.built >= hnswBatch {
		t.Fatalf("worker idle with shadow %v, %d of %d linked", a.sh != nil, a.g.built, a.g.len())
	}
	if a.g.nDead*4 >= a.g.len() {
		t.Fatalf("not compacted: %d dead of %d", a.g.nDead, a.g.len())
	}
	if a.Len() != exact.Len() || len(a.pos) != exact.Len() {
		t.Fatalf("Len %d, pos %d, want %d", a.Len(), len(a.pos), exact.Len())
	}
	for id, i := range exact.pos {
		got, ok := a.Get(id)
		if !ok || !slices.Equal(got, stored(exact.row(i))) {
			t.Fatalf("Get(%s) after compaction wrong", id)
		}
	}
	checkMean(t, a, exact)
	qs := make([][]float32, 100)
	for i := range qs {
		qs[i] = randomUnit(rng, dim)
	}
	graphUsed(t, a, 10)
	if r := recallAt(t, exact, a, qs, 10); r < 0.95 {
		t.Fatalf("recall@10 after compaction %.4f", r)
	}
}

// TestHNSW_PendingSearched: vectors not yet linked are found by the scan.
func TestHNSW_PendingSearched(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	dim := 16
	vecs := make([][]float32, 2000)
	for i := range vecs {
		vecs[i] = randomUnit(rng, dim)
	}
	a := testANN(t, vecs, smallHNSW)
	a.mu.Lock() // hold the worker off
	a.dropped = true
	a.mu.Unlock()
	a.wait()
	v := randomUnit(rng, dim)
	a.Add("new", v)
	if a.g.built == a.g.len() {
		t.Fatal("expected a pending node")
	}
	if h := a.Search(v, 5); len(h) == 0 || h[0].ID != "new" {
		t.Fatalf("pending vector not found: %v", h)
	}
}

func TestAutoIndex_Threshold(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	dim, threshold := 16, 1000
	x := NewAuto(dim, threshold, DefaultParams)
	exact := newFlatIndex(dim)
	add := func(i int) {
		v := randomUnit(rng, dim)
		x.Add(strconv.Itoa(i), v)
		exact.Add(strconv.Itoa(i), v)
	}
	for i := 0; i < threshold-1; i++ {
		add(i)
	}
	if x.ann != nil {
		t.Fatal("graph below the threshold")
	}
	q := randomUnit(rng, dim)
	want := fmt.Sprint(exact.Search(q, 10))
	add(threshold - 1)
	if x.ann == nil || x.flat != nil {
		t.Fatal("no graph at the threshold")
	}
	// Right after the switch (graph possibly unlinked) and after linking,
	// the results are the same as before.
	if err := codeClose(x.Search(q, 10), exact.Search(q, 10), exact, q); err != "" {
		t.Fatalf("after switch: %s (want %s)", err, want)
	}
	x.ann.wait()
	if x.ann.g.built != threshold {
		t.Fatalf("linked %d of %d", x.ann.g.built, threshold)
	}
	for i := threshold; i < 3*threshold; i++ {
		add(i)
	}
	if x.Len() != exact.Len() {
		t.Fatalf("Len %d, want %d", x.Len(), exact.Len())
	}
	checkMean(t, x, exact)
	// Down below half the threshold: back to an exact flat index.
	for i := 0; i < 3*threshold-threshold/2+1; i++ {
		x.Remove(strconv.Itoa(i))
		exact.Remove(strconv.Itoa(i))
	}
	if x.flat == nil || x.ann != nil {
		t.Fatal("still a graph below half the threshold")
	}
	if x.Len() != exact.Len() {
		t.Fatalf("Len %d, want %d", x.Len(), exact.Len())
	}
	// (the vectors come back from the graph as it stored them, in half
	// precision)
	if err := codeClose(x.Search(q, 10), exact.Search(q, 10), exact, q); err != "" {
		t.Fatalf("back to flat: %s", err)
	}
	checkMean(t, x, exact)
}

// TestHNSW_Concurrent runs searches, as the Index does under its read lock,
// while the worker links and writers (one at a time, under the write lock)
// add and remove; run with -race.
func TestHNSW_Concurrent(t *testing.T) {
	rng := rand.New(rand.NewSource(10))
	dim := 16
	x := NewAuto(dim, 500, smallHNSW)
	var mu sync.RWMutex // the Index's lock
	var wg sync.WaitGroup
	done := make(chan struct{})
	for r := 0; r < 4; r++ {
		qr := rand.New(rand.NewSource(int64(r)))
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				q := randomUnit(qr, dim)
				mu.RLock()
				for _, h := range x.Search(q, 10) {
					if _, ok := x.Get(h.ID); !ok {
						t.Errorf("hit %s has no vector", h.ID)
					}
				}
				_ = x.Mean()
				_ = x.Len()
				mu.RUnlock()
			}
		})
	}
	compactions := 0
	for i := 0; i < 4000; i++ {
		v := randomUnit(rng, dim)
		mu.Lock()
		x.Add(strconv.Itoa(i), v)
		if i%2 == 0 {
			x.Remove(strconv.Itoa(rng.Intn(i + 1)))
		}
		if x.ann != nil {
			x.ann.mu.Lock()
			x.ann.compactMin = 50
			if x.ann.sh != nil {
				compactions++
			}
			x.ann.mu.Unlock()
		}
		mu.Unlock()
	}
	close(done)
	wg.Wait()
	if x.ann == nil {
		t.Fatal("never switched to the graph")
	}
	if compactions == 0 {
		t.Error("no compaction ran alongside the searches")
	}
	x.ann.wait()
}

// qscan searches a by scanning all its codes, as it does its pending
// vectors.
type qscan struct{ a *annIndex }

func (s qscan) Add(string, []float32)          {}
func (s qscan) Remove(string)                  {}
func (s qscan) Get(string) ([]float32, bool)   { return nil, false }
func (s qscan) GetInto(string, []float32) bool { return false }
func (s qscan) Len() int                       { return 0 }
func (s qscan) Mean() []float32                { return nil }
func (s qscan) SearchAccept(q []float32, k int, _ func(string) bool) []Hit {
	return s.Search(q, k)
}
func (s qscan) SearchNear(q []float32, k int, _ func(string) bool, _ []string) []Hit {
	return s.Search(q, k)
}
func (s qscan) Search(q []float32, k int) []Hit {
	var hits []Hit
	for _, c := range s.a.g.scan(q, k, 0, s.a.g.len(), nil) {
		hits = append(hits, Hit{s.a.g.ids[c.node], float64(Dot(q, s.a.g.vec(int(c.node))))})
	}
	sortHits(hits)
	return hits[:min(k, len(hits))]
}
