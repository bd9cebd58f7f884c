package vector

import (
	"cmp"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// annIndex is the approximate Index: an HNSW graph (hnsw.go) that a
// background worker keeps up to date.
//
// Add only stores the vector; the worker links it into the graph. Until it
// has, the node is "pending" and searches scan it exactly, so a search
// always sees every vector and nothing that adds vectors waits for the
// graph. This is how a large index is opened: the doc log replay fills the
// store at full speed and searches scan until the graph has caught up.
//
// Remove marks the node dead: the graph still walks through it but never
// returns it. Once a quarter of the nodes are dead the worker builds a new
// generation from the live ones beside the old, which keeps answering, and
// swaps it in when it has caught up.
//
// The graph depends only on the order of Add and Remove calls (levels come
// from a seeded generator, drawn in insertion order), not on when the
// worker runs; results can differ only while some nodes are pending.
//
// Locking: the Index calls Add and Remove under its write lock and Search,
// Get, Len and Mean under its read lock, so the methods need no more than
// that among themselves. mu is for the worker: it commits under the write
// lock, and the read-only methods hold the read lock.
type annIndex struct {
	mu   sync.RWMutex
	idle *sync.Cond // broadcast when the worker stops
	dim  int
	p    Params

	g   *hnswGraph
	pos map[string]int // live id → node of g
	sum []float64      // running sum of the live vectors, for Mean
	sh  *shadowBuild   // compaction under way

	removed int    // node of the last Remove, which an Add of the same may revive; -1 if none
	buf     []int8 // Add's scratch for a code

	searching atomic.Int32 // searches under way, which the worker makes way for

	working bool         // the worker goroutine runs
	dropped bool         // replaced by a flat index: the worker stops
	stop    *atomic.Bool // set when the owning index is garbage

	// compactMin is the number of dead nodes below which no compaction
	// starts however large their share.
	compactMin int
}

// shadowBuild is a compaction: a new generation filled, in order, with the
// old one's live nodes at the start and every node added since.
type shadowBuild struct {
	g    *hnswGraph // private to the worker until the swap
	src  []int      // old nodes live when it began
	from int        // old nodes from here on are taken as they come
	old  []int      // new node → old node
}

// newANNFromFlat takes over f's vectors (f must not be used afterwards) in
// f's order and starts linking them.
func newANNFromFlat(f *flatIndex, p Params, stop *atomic.Bool) *annIndex {
	a := &annIndex{dim: f.dim, p: p.valid(), pos: f.pos, sum: make([]float64, f.dim), stop: stop, compactMin: 1024, removed: -1}
	a.idle = sync.NewCond(&a.mu)
	a.g = newHNSWGraph(f.dim, p)
	a.g.addAll(f.ids, f.row)
	for n := range a.g.len() {
		a.addSum(a.g, n, 1)
	}
	*f = flatIndex{}
	a.mu.Lock()
	a.kick()
	a.mu.Unlock()
	return a
}

func (a *annIndex) Len() int {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.g.len() - a.g.nDead
}

func (a *annIndex) Add(id string, v []float32) {
	if len(v) != a.dim {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	g := a.g
	if len(a.buf) < g.stride {
		a.buf = make([]int8, g.stride)
	}
	if n, ok := a.pos[id]; ok {
		if g.stores(n, v, a.buf) {
			return // reindexed unchanged: keep the node
		}
		a.addSum(g, n, -1)
		g.kill(n)
	} else if n := a.removed; n >= 0 && n < g.len() && g.ids[n] == id && g.dead[n] && g.stores(n, v, a.buf) &&
		(a.sh == nil || n >= a.sh.from) {
		// The Index replaces a doc by removing and adding it: an unchanged
		// vector gets its node back instead of a new one. (Not when a
		// compaction began in between and left the node out.)
		g.dead[n] = false
		g.nDead--
		a.pos[id] = n
		a.addSum(g, n, 1)
		a.removed = -1
		return
	}
	a.removed = -1
	n := g.add(id, v)
	a.pos[id] = n
	a.addSum(g, n, 1) // the sum is of the stored vectors, which Remove subtracts
	a.maybeCompact()
	a.kick()
}

func (a *annIndex) Remove(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n, ok := a.pos[id]
	if !ok {
		return
	}
	a.addSum(a.g, n, -1)
	a.g.kill(n)
	delete(a.pos, id)
	a.removed = n
	a.maybeCompact()
}

// addSum adds node n of g as stored (sign 1) to the running sum, or
// takes it off (-1).
func (a *annIndex) addSum(g *hnswGraph, n int, sign float64) {
	scale := g.scales[n]
	for j, c := range g.code(n)[:a.dim] {
		a.sum[j] += sign * float64(float32(c)*scale) // as decode has it
	}
}

func (a *annIndex) Mean() []float32 {
	a.mu.RLock()
	defer a.mu.RUnlock()
	live := a.g.len() - a.g.nDead
	if live == 0 {
		return nil
	}
	m := make([]float32, a.dim)
	for j, s := range a.sum {
		m[j] = float32(s / float64(live))
	}
	return m
}

func (a *annIndex) Get(id string) ([]float32, bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	n, ok := a.pos[id]
	if !ok {
		return nil, false
	}
	return a.g.vec(n), true
}

func (a *annIndex) GetInto(id string, v []float32) bool {
	a.mu.RLock()
	defer a.mu.RUnlock()
	n, ok := a.pos[id]
	if ok {
		a.g.decode(v, n)
	}
	return ok
}

// Search walks the graph over the linked nodes and scans the pending ones,
// or scans all when that is cheaper (Params.ScanFactor). Both rank by
// the 8-bit codes; the head of that ranking is scored again with Dot of
// the float query and the vectors as stored (the decoded codes, what Get
// returns), so scores are the flat index's to about 1e-3 (quant.go).
func (a *annIndex) Search(q []float32, k int) []Hit { return a.SearchAccept(q, k, nil) }

// SearchAccept with an accept filter scans every node's code instead of
// walking the graph: which nodes a walk reaches depends on every vector
// linked into the graph, readable or not, so a reader's vector ranks could
// move when someone else stores a vector near theirs. A code's similarity
// depends on its own vector alone. (At 100k vectors the scan costs a few
// ms more than the walk; readers of everything, the agent, still walk.)
func (a *annIndex) SearchAccept(q []float32, k int, accept func(string) bool) []Hit {
	return a.SearchNear(q, k, accept, nil)
}

// SearchNear walks from the linked, live nodes of near as well as from
// the graph's entry point, with the narrower width EfNear when there is
// one: a walk that starts beside its answers need not search as widely
// for them as one that descends from an arbitrary entry point.
func (a *annIndex) SearchNear(q []float32, k int, accept func(string) bool, near []string) []Hit {
	if len(q) != a.dim || k <= 0 {
		return nil
	}
	a.searching.Add(1)
	defer a.searching.Add(-1)
	a.mu.RLock()
	defer a.mu.RUnlock()
	g := a.g
	live := g.len() - g.nDead
	if live == 0 {
		return nil
	}
	ef := max(a.p.EfSearch, k)
	var rows []uint32
	scanFrom := 0
	if accept == nil && ef*a.p.ScanFactor < g.built {
		var seeds []uint32
		for _, id := range near {
			if n, ok := a.pos[id]; ok && n < g.built && !g.dead[n] {
				seeds = append(seeds, uint32(n))
			}
		}
		if len(seeds) > 0 {
			ef = max(efNear, k)
		}
		s := scratchPool.Get().(*scratch)
		cs := g.search(q, ef, s, seeds)
		// The walk ranks by the 8-bit codes; only the head of its list can
		// make the top k on the float vectors.
		for _, c := range cs[:min(len(cs), rescoreDepth(k))] {
			rows = append(rows, c.node)
		}
		scratchPool.Put(s)
		scanFrom = g.built
	}
	for _, c := range g.scan(q, k, scanFrom, g.len(), accept) {
		rows = append(rows, c.node)
	}
	hits := make([]Hit, len(rows))
	const batch = 16
	buf := make([]float32, a.dim)
	v := g.view()
	v.prefetch(rows[:min(batch, len(rows))])
	for i := 0; i < len(rows); i += batch {
		if i+batch < len(rows) {
			v.prefetch(rows[i+batch : min(i+2*batch, len(rows))])
		}
		for j := i; j < min(i+batch, len(rows)); j++ {
			n := int(rows[j])
			g.decode(buf, n)
			hits[j] = Hit{ID: g.ids[n], Score: float64(Dot(q, buf))}
		}
	}
	sortHits(hits)
	return hits[:min(k, len(hits))]
}

// sortHits orders hits best first, ties by id.
func sortHits(hits []Hit) {
	slices.SortFunc(hits, func(x, y Hit) int {
		if c := cmp.Compare(y.Score, x.Score); c != 0 {
			return c
		}
		return cmp.Compare(x.ID, y.ID)
	})
}

// rescoreDepth is how many of the graph's best (by code) are scored on the
// float vectors for the k best: the codes' error is about 1% of a score, so
// twice k and a margin loses nothing measurable (TestHNSW_Measure).
func rescoreDepth(k int) int { return 2*k + 32 }

// scan returns the nodes of [lo, hi) that may be among the k best live
// ones: the rescoreDepth(k) best by their codes (of each part, when split
// across cores), for Search to score on the float vectors. At 100k
// vectors this finds all of the exact top 100 (TestHNSW_Measure) in a
// quarter of the time a scan of the float vectors takes: it reads 512
// bytes per vector instead of 2 KB.
func (g *hnswGraph) scan(q []float32, k, lo, hi int, accept func(string) bool) []cand {
	n := hi - lo
	if n <= 0 {
		return nil
	}
	code := make([]int8, g.stride)
	qp := probe{code, quantize(q, code)}
	depth := rescoreDepth(k)
	if n < parallelMin {
		return g.scanPart(qp, depth, lo, hi, accept)
	}
	parts := min(runtime.GOMAXPROCS(0), 8)
	res := make([][]cand, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() { res[p] = g.scanPart(qp, depth, lo+p*n/parts, lo+(p+1)*n/parts, accept) })
	}
	wg.Wait()
	return slices.Concat(res...)
}

func (g *hnswGraph) scanPart(qp probe, depth, lo, hi int, accept func(string) bool) []cand {
	v := g.view()
	h := make(farHeap, 0, depth+1)
	for i := lo; i < hi; i++ {
		if g.dead[i] {
			continue
		}
		s := v.sim(qp, uint32(i))
		if len(h) == depth && s <= h[0].sim {
			continue
		}
		if accept != nil && !accept(g.ids[i]) {
			continue
		}
		if len(h) < depth {
			h.push(cand{s, uint32(i)})
		} else if s > h[0].sim {
			h.pop()
			h.push(cand{s, uint32(i)})
		}
	}
	return h
}

// maybeCompact starts a compaction once a quarter of the nodes are dead.
// Caller holds the write lock.
func (a *annIndex) maybeCompact() {
	g := a.g
	if a.sh != nil || g.nDead < a.compactMin || 4*g.nDead < g.len() {
		return
	}
	src := make([]int, 0, g.len()-g.nDead)
	for i, d := range g.dead {
		if !d {
			src = append(src, i)
		}
	}
	ng := newHNSWGraph(a.dim, a.p)
	a.sh = &shadowBuild{g: ng, src: src, from: g.len(), old: make([]int, 0, len(src))}
	a.kick()
}

// kick starts the worker unless it runs. Caller holds the write lock.
func (a *annIndex) kick() {
	if a.working || a.dropped {
		return
	}
	a.working = true
	go a.work()
}

// work links pending nodes, or fills the compaction's new generation, a
// batch at a time until there is nothing (or no full batch) left to do.
func (a *annIndex) work() {
	ss := planners()
	a.mu.Lock()
	for !a.dropped && !a.stop.Load() {
		if sh := a.sh; sh != nil {
			// Copy over what the old generation has, then link a batch of
			// it; the new generation is not visible to searches yet.
			for {
				j := len(sh.old)
				o := sh.from + j - len(sh.src)
				if j < len(sh.src) {
					o = sh.src[j]
				}
				if o >= a.g.len() {
					break
				}
				sh.g.addFrom(a.g, o)
				sh.old = append(sh.old, o)
				if sh.g.len()-sh.g.built >= hnswBatch {
					break
				}
			}
			size := sh.g.nextBatch()
			if size == 0 {
				a.swap() // caught up: the rest is pending in the new one
				continue
			}
			a.mu.Unlock()
			a.link(sh.g, size, ss, false)
			a.mu.Lock()
			continue
		}
		g := a.g
		size := g.nextBatch()
		if size == 0 {
			break
		}
		a.mu.Unlock()
		a.link(g, size, ss, true)
		a.mu.Lock()
	}
	a.working = false
	a.idle.Broadcast()
	a.mu.Unlock()
}

// link plans and commits the next size nodes of g; when g is the searched
// generation (shared), each commit takes the write lock. Called by the
// worker without the lock.
func (a *annIndex) link(g *hnswGraph, size int, ss []*scratch, shared bool) {
	a.mu.RLock()
	v := g.view()
	a.mu.RUnlock()
	// Searches first: they scan what is not linked yet by its codes, at
	// 100k about as fast as walking the graph, unless the worker takes
	// their cores. So a batch waits a little for the searches under way,
	// and if some still run, is planned on one core. (The batch comes out
	// the same either way.)
	for waited := 0; a.searching.Load() > 0 && waited < 20; waited++ {
		time.Sleep(100 * time.Microsecond)
	}
	if a.searching.Load() > 0 {
		ss = ss[:1]
	}
	plans := g.planBatch(size, v, ss)
	for i := range plans {
		if i > 0 {
			g.rebase(&plans[i], v)
		}
		if shared {
			a.mu.Lock()
		}
		g.commit(plans[i])
		if shared {
			a.mu.Unlock()
		}
	}
}

// swap makes the compaction's generation current, carrying over the
// removals made while it was built. Caller holds the write lock.
func (a *annIndex) swap() {
	sh := a.sh
	ng := sh.g
	pos := make(map[string]int, len(a.pos))
	for j, o := range sh.old {
		if a.g.dead[o] {
			ng.kill(j)
		} else {
			pos[ng.ids[j]] = j
		}
	}
	a.g, a.pos, a.sh, a.removed = ng, pos, nil, -1
	// Removals during the build may already call for the next one.
	a.maybeCompact()
}

// wait blocks until the worker is idle (tests, benchmarks).
func (a *annIndex) wait() {
	a.mu.Lock()
	for a.working {
		a.idle.Wait()
	}
	a.mu.Unlock()
}

// drop stops the worker for good and returns the live vectors in node
// order, for a flat index to take over.
func (a *annIndex) drop(into *flatIndex) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.dropped = true
	g := a.g
	for i, id := range g.ids {
		if !g.dead[i] {
			into.Add(id, g.vec(i))
		}
	}
}

// efNear is the walk's width when it also starts from hints (SearchNear).
// On the benchmark corpus at 100k (snowbench search, quiet machine), the
// relay's recall@10 is 0.825 at 128, 256 and 512 against 0.823 with the
// unseeded walk at EfSearch 1536, for 6.1–6.9 ms of CPU per search against
// 8.2: the first keyword hits, moved toward by the query's feedback
// (Toward), sit beside the answers.
const efNear = 256
