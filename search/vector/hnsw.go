package vector

import (
	"math"
	"math/rand"
	"runtime"
	"slices"
	"sync"
)

// This file is the graph of the approximate index: a hierarchical navigable
// small world (Malkov & Yashunin). Every node is on layer 0; a node drawn at
// level l is also on layers 1..l, each layer up holding about 1/M of the
// nodes of the one below. A search walks greedily down the sparse layers to
// a good entry point, then runs a best-first search of width ef on layer 0.
//
// Similarity is the dot product (stored vectors are unit length, so it is
// the cosine; a query need not be, ranking by dot is the same). The graph
// keeps only 8-bit codes of the vectors (quant.go): the walk compares a
// query's code with them, and the nodes it ends with are scored again on
// the float query against their codes (annIndex.Search). A million
// 512-dimensional vectors take 0.5 GB this way; the half-precision copy
// the scores used to come from took another 1 GB.
//
// Concurrency: only the annIndex worker changes the links. It plans
// insertions (several at once, see hnswBatch) without any lock, since the
// links cannot change meanwhile, and commits each under the annIndex write
// lock. Searches read under the read lock. The node store (codes, scales,
// ids, dead) is appended to by the owner under the write lock; a node's
// vector never changes once stored, and its code never moves (table.go),
// so a view taken under the lock stays good for the nodes it had.

// Params are the graph's knobs.
type Params struct {
	M              int // links per node on layers ≥ 1; layer 0 holds 2M
	EfConstruction int // search width when inserting
	EfSearch       int // search width of a query (at least k)
	// ScanFactor decides between walking the graph and scanning every
	// vector's code: a walk of width ef visits about 13·ef nodes, each a
	// random read costing about what 4 codes read in a row do, so a search
	// walks only when more than ScanFactor·ef vectors are linked.
	ScanFactor int
	Seed       int64 // levels are drawn from this, in insertion order
}

// DefaultParams is tuned for the built-in embedder on the benchmark corpus
// (TestHNSW_Measure, BenchmarkQuerySettled). Its queries, a few keywords,
// sit far from every doc, which makes a graph walk wander: at 100k docs
// the walk has to be wide (efSearch 768: recall@100 0.94 against the exact
// scan, engine recall@10 -0.05; 1536: 0.98, engine level with the exact
// scan). It then takes about 2.2 ms, as long as scanning the codes of all
// 100k vectors, which finds the exact top 100 (a scan of the floats, as
// flatIndex does: 9 ms). So at this size the graph only breaks even; it
// pulls ahead as the index grows, and with embedders whose queries land
// near their docs, which need a far narrower walk.
var DefaultParams = Params{M: 16, EfConstruction: 160, EfSearch: 1536, ScanFactor: 50, Seed: 1}

const hnswMaxLevel = 15

// hnswGraph is one generation: the node store and the graph over its first
// built nodes. Nodes are numbered in the order they were added.
type hnswGraph struct {
	p    Params
	dim  int
	m0   int     // layer-0 capacity
	mult float64 // level multiplier, 1/ln M
	rng  *rand.Rand

	// node store
	codes  table[int8] // node i's 8-bit code, zero padded to stride
	scales []float32   // node i's vector ≈ codes × scales[i]
	stride int         // dim rounded up to 32, for the SIMD kernel
	ids    []string
	dead   []bool
	nDead  int

	// graph over nodes [0, built)
	built   int
	levels  []uint8
	link0   table[uint32] // node i: count, then m0 slots
	upper   []uint32      // node i's layers 1..levels[i] from upper[upperAt[i]]: per layer count, then M slots
	upperAt []uint32      // (one slice, not one per node: a slice header is 24 bytes)
	entry   uint32
	top     int // level of entry; -1 while the graph is empty
}

// valid returns p with every knob in range.
func (p Params) valid() Params {
	p.M = max(p.M, 2)
	p.EfConstruction = max(p.EfConstruction, p.M)
	p.EfSearch = max(p.EfSearch, 1)
	p.ScanFactor = max(p.ScanFactor, 1)
	return p
}

func newHNSWGraph(dim int, p Params) *hnswGraph {
	p = p.valid()
	stride := (dim + 31) &^ 31
	return &hnswGraph{
		p:      p,
		dim:    dim,
		m0:     2 * p.M,
		mult:   1 / math.Log(float64(p.M)),
		rng:    rand.New(rand.NewSource(p.Seed)),
		stride: stride,
		codes:  newTable[int8](stride),
		link0:  newTable[uint32](2*p.M + 1),
		top:    -1,
	}
}

func (g *hnswGraph) len() int { return len(g.ids) }

// add appends a node; the worker links it later.
func (g *hnswGraph) add(id string, v []float32) int {
	return g.push(id, quantize(v, g.codes.grow()))
}

// addFrom appends node o of src (a graph of the same dimension) as it is
// stored: its code is not made again.
func (g *hnswGraph) addFrom(src *hnswGraph, o int) int {
	copy(g.codes.grow(), src.code(o))
	return g.push(src.ids[o], src.scales[o])
}

// push appends the rest of a node whose code is in place.
func (g *hnswGraph) push(id string, scale float32) int {
	g.scales = append(g.scales, scale)
	g.ids = append(g.ids, id)
	g.dead = append(g.dead, false)
	return len(g.ids) - 1
}

// addAll appends the vectors row(0), row(1), … (ids alongside), taking
// ids over.
func (g *hnswGraph) addAll(ids []string, row func(int) []float32) {
	g.ids = ids
	g.dead = make([]bool, len(ids))
	g.codes.growTo(len(ids))
	g.scales = make([]float32, len(ids))
	for i := range ids {
		g.scales[i] = quantize(row(i), g.code(i))
	}
}

func (g *hnswGraph) kill(n int) {
	if !g.dead[n] {
		g.dead[n] = true
		g.nDead++
	}
}

// vec is node n's vector as stored (its code times its scale), in a new
// slice.
func (g *hnswGraph) vec(n int) []float32 {
	v := make([]float32, g.dim)
	g.decode(v, n)
	return v
}

// decode writes node n's vector as stored into v (len(v) ≥ dim).
func (g *hnswGraph) decode(v []float32, n int) {
	decode(v[:g.dim], g.code(n), g.scales[n])
}

// code is node n's code, zero padded to stride.
func (g *hnswGraph) code(n int) []int8 {
	return g.codes.row(n)
}

// stores tells whether node n holds v as it would store it now: same code,
// same scale. buf is scratch of stride bytes.
func (g *hnswGraph) stores(n int, v []float32, buf []int8) bool {
	if len(v) != g.dim {
		return false
	}
	clear(buf)
	return quantize(v, buf) == g.scales[n] && slices.Equal(buf, g.code(n))
}

// navView is the part of the store a graph walk reads. The worker takes one
// under the lock and reads it without: later appends do not touch it.
type navView struct {
	codes  table[int8]
	scales []float32
}

func (g *hnswGraph) view() navView { return navView{g.codes, g.scales} }

func (v navView) code(n uint32) []int8 { return v.codes.row(int(n)) }

// probe is what is being searched for: a code and its scale.
type probe struct {
	code  []int8
	scale float32
}

func (v navView) sim(p probe, n uint32) float32 {
	return float32(dotInt8(p.code, v.code(n))) * p.scale * v.scales[n]
}

func (v navView) probe(n uint32) probe { return probe{v.code(n), v.scales[n]} }

// links returns node n's neighbours on layer l.
func (g *hnswGraph) links(n uint32, l int) []uint32 {
	if l == 0 {
		r := g.link0.row(int(n))
		return r[1 : 1+r[0]]
	}
	off := int(g.upperAt[n]) + (l-1)*(g.p.M+1)
	return g.upper[off+1 : off+1+int(g.upper[off])]
}

func (g *hnswGraph) setLinks(n uint32, l int, list []uint32) {
	var s []uint32
	if l == 0 {
		s = g.link0.row(int(n))
	} else {
		s = g.upper[int(g.upperAt[n])+(l-1)*(g.p.M+1):]
	}
	s[0] = uint32(len(list))
	copy(s[1:], list)
}

func (g *hnswGraph) randomLevel() int {
	l := int(-math.Log(1-g.rng.Float64()) * g.mult)
	return min(l, hnswMaxLevel)
}

// greedy walks layer l from ep to a local best for q.
func (g *hnswGraph) greedy(v navView, q probe, ep cand, l int) cand {
	for changed := true; changed; {
		changed = false
		for _, nb := range g.links(ep.node, l) {
			if s := v.sim(q, nb); s > ep.sim {
				ep = cand{s, nb}
				changed = true
			}
		}
	}
	return ep
}

// searchLayer is the best-first search of width ef on layer l from the
// entry points eps. With dead set, dead nodes are walked through but not
// returned. The results are left in s.out, best first.
func (g *hnswGraph) searchLayer(v navView, q probe, eps []cand, ef, l int, dead []bool, s *scratch) {
	s.next = s.next[:0]
	s.found = s.found[:0]
	for _, e := range eps {
		if !s.visit(e.node) {
			continue
		}
		s.next.push(e)
		if dead == nil || !dead[e.node] {
			s.found.push(e)
		}
	}
	for len(s.found) > ef {
		s.found.pop()
	}
	for len(s.next) > 0 {
		c := s.next.pop()
		if len(s.found) >= ef && c.sim < s.found[0].sim {
			break
		}
		fresh := s.fresh[:0]
		for _, nb := range g.links(c.node, l) {
			if s.visit(nb) {
				fresh = append(fresh, nb)
			}
		}
		s.fresh = fresh
		v.prefetch(fresh)
		for _, nb := range fresh {
			sim := v.sim(q, nb)
			if len(s.found) < ef || sim > s.found[0].sim {
				s.next.push(cand{sim, nb})
				if dead == nil || !dead[nb] {
					s.found.push(cand{sim, nb})
					if len(s.found) > ef {
						s.found.pop()
					}
				}
			}
		}
	}
	s.out = s.out[:0]
	for len(s.found) > 0 {
		s.out = append(s.out, s.found.pop())
	}
	for i, j := 0, len(s.out)-1; i < j; i, j = i+1, j-1 {
		s.out[i], s.out[j] = s.out[j], s.out[i]
	}
}

// search returns up to ef live nodes near q, best first by their codes'
// similarity, walking layer 0 from the upper layers' entry point and from
// seeds. The slice belongs to s.
func (g *hnswGraph) search(q []float32, ef int, s *scratch, seeds []uint32) []cand {
	s.out = s.out[:0]
	if g.top < 0 {
		return nil
	}
	if len(s.code) < g.stride {
		s.code = make([]int8, g.stride)
	}
	qp := probe{s.code[:g.stride], quantize(q, s.code)}
	v := g.view()
	s.begin(g.built)
	ep := cand{v.sim(qp, g.entry), g.entry}
	for l := g.top; l > 0; l-- {
		ep = g.greedy(v, qp, ep, l)
	}
	eps := make([]cand, 0, 1+len(seeds))
	eps = append(eps, ep)
	for _, n := range seeds {
		eps = append(eps, cand{v.sim(qp, n), n})
	}
	g.searchLayer(v, qp, eps, ef, 0, g.dead, s)
	return s.out
}

// insertPlan is an insertion worked out against the graph: the new node's
// links per layer and the neighbour lists that change.
type insertPlan struct {
	node    uint32
	level   int
	links   [][]uint32
	updates []linkUpdate
}

// linkUpdate replaces node's list on layer with list, worked out from base
// and the new node at similarity sim.
type linkUpdate struct {
	node  uint32
	layer int
	sim   float32
	base  []uint32
	list  []uint32
}

// plan works out how node n at the given level joins the graph of nodes
// [0, built); v is a view of the store holding n. Plans only read the
// graph, so several may be worked out at once while no plan is committed.
func (g *hnswGraph) plan(n, level int, v navView, s *scratch) insertPlan {
	p := insertPlan{node: uint32(n), level: level}
	p.links = make([][]uint32, p.level+1)
	if g.top < 0 {
		return p
	}
	q := v.probe(uint32(n))
	ep := cand{v.sim(q, g.entry), g.entry}
	for l := g.top; l > p.level; l-- {
		ep = g.greedy(v, q, ep, l)
	}
	eps := []cand{ep}
	for l := min(p.level, g.top); l >= 0; l-- {
		s.begin(n + 1)
		g.searchLayer(v, q, eps, g.p.EfConstruction, l, nil, s)
		eps = append(eps[:0:0], s.out...)
		chosen := g.selectNeighbours(v, eps, g.p.M)
		p.links[l] = make([]uint32, len(chosen))
		for i, c := range chosen {
			p.links[l][i] = c.node
			u := linkUpdate{node: c.node, layer: l, sim: c.sim, base: slices.Clone(g.links(c.node, l))}
			u.list = g.withLink(v, u, uint32(n))
			p.updates = append(p.updates, u)
		}
	}
	return p
}

// withLink is u.base with node n (at similarity u.sim to u.node) added,
// and when that is over capacity the best spread of them.
func (g *hnswGraph) withLink(v navView, u linkUpdate, n uint32) []uint32 {
	capacity := g.p.M
	if u.layer == 0 {
		capacity = g.m0
	}
	if len(u.base) < capacity {
		return append(slices.Clip(u.base), n)
	}
	base := v.probe(u.node)
	cs := make([]cand, 0, len(u.base)+1)
	cs = append(cs, cand{u.sim, n})
	for _, o := range u.base {
		cs = append(cs, cand{v.sim(base, o), o})
	}
	sortCands(cs)
	kept := g.selectNeighbours(v, cs, capacity)
	list := make([]uint32, len(kept))
	for j, k := range kept {
		list[j] = k.node
	}
	return list
}

// rebase redoes the updates of p whose lists changed since p was worked
// out (by the plans committed before it in its batch).
func (g *hnswGraph) rebase(p *insertPlan, v navView) {
	for i := range p.updates {
		u := &p.updates[i]
		if cur := g.links(u.node, u.layer); !slices.Equal(cur, u.base) {
			u.base = slices.Clone(cur)
			u.list = g.withLink(v, *u, p.node)
		}
	}
}

// selectNeighbours is the paper's heuristic: going through cs (best first),
// keep a candidate unless it is closer to one already kept than to the
// base. That keeps links pointing in different directions, which is what
// lets a greedy walk cross between clusters.
func (g *hnswGraph) selectNeighbours(v navView, cs []cand, m int) []cand {
	if len(cs) <= m {
		return cs
	}
	out := make([]cand, 0, m)
	for _, c := range cs {
		if len(out) == m {
			break
		}
		cp := v.probe(c.node)
		ok := true
		for _, o := range out {
			if v.sim(cp, o.node) > c.sim {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, c)
		}
	}
	return out
}

// sortCands sorts best first (insertion sort: the lists are short).
func sortCands(cs []cand) {
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j].sim > cs[j-1].sim; j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}

// commit applies a plan; the caller holds the write lock.
func (g *hnswGraph) commit(p insertPlan) {
	n := p.node
	g.levels = append(g.levels, uint8(p.level))
	g.link0.grow()
	g.upperAt = append(g.upperAt, uint32(len(g.upper)))
	g.upper = append(g.upper, make([]uint32, p.level*(g.p.M+1))...)
	for l, list := range p.links {
		g.setLinks(n, l, list)
	}
	for _, u := range p.updates {
		g.setLinks(u.node, u.layer, u.list)
	}
	g.built++
	if p.level > g.top {
		g.top = p.level
		g.entry = n
	}
}

// Linking is done in batches: hnswBatch consecutive nodes are planned in
// parallel against the graph as it was before the batch, then committed in
// order, each plan rebased on the ones before it. Nodes of a batch do not
// link to each other directly (they do through their neighbours' lists),
// which at a few nodes among thousands costs nothing measurable. The batch
// size is fixed, not the number of cores, so the graph depends only on the
// order of the nodes; a batch is linked once it is complete, so up to
// hnswBatch-1 nodes stay pending (and are scanned) until more arrive.
// Small graphs, where a batch is a large share, are linked one by one.
const (
	hnswBatch       = 8
	hnswSerialBelow = 4096 // a multiple of hnswBatch
)

// nextBatch is how many nodes from built on the worker should link now: a
// full batch (one node below hnswSerialBelow), or 0 to wait for more.
func (g *hnswGraph) nextBatch() int {
	size := 1
	if g.built >= hnswSerialBelow {
		size = hnswBatch
	}
	if g.len()-g.built < size {
		return 0
	}
	return size
}

// planBatch plans nodes built … built+size-1 (levels drawn in order), in
// parallel when there are several. ss holds a scratch per planner.
func (g *hnswGraph) planBatch(size int, v navView, ss []*scratch) []insertPlan {
	plans := make([]insertPlan, size)
	levels := make([]int, size)
	for i := range levels {
		levels[i] = g.randomLevel()
	}
	workers := min(size, len(ss))
	if workers <= 1 {
		for i := range plans {
			plans[i] = g.plan(g.built+i, levels[i], v, ss[0])
		}
		return plans
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < size; i += workers {
				plans[i] = g.plan(g.built+i, levels[i], v, ss[w])
			}
		})
	}
	wg.Wait()
	return plans
}

// planners is how many scratch spaces (parallel planners) a worker keeps.
func planners() []*scratch {
	ss := make([]*scratch, min(runtime.GOMAXPROCS(0), hnswBatch))
	for i := range ss {
		ss[i] = new(scratch)
	}
	return ss
}
