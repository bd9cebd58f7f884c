package vector

import "sync"

// The working structures of a graph walk: candidates, heaps, visited set.

// cand is a node and its similarity to whatever is being searched for.
type cand struct {
	sim  float32
	node uint32
}

// The two heaps of a walk, written out rather than with container/heap,
// whose interface calls cost more than the comparisons here. nearHeap pops
// the most similar candidate, farHeap the least similar.
type nearHeap []cand

func (h *nearHeap) push(x cand) {
	c := append(*h, x)
	i := len(c) - 1
	for i > 0 {
		p := (i - 1) / 2
		if c[i].sim <= c[p].sim {
			break
		}
		c[i], c[p] = c[p], c[i]
		i = p
	}
	*h = c
}

func (h *nearHeap) pop() cand {
	c := *h
	top := c[0]
	last := len(c) - 1
	c[0] = c[last]
	c = c[:last]
	for i := 0; ; {
		b := 2*i + 1
		if b >= last {
			break
		}
		if r := b + 1; r < last && c[r].sim > c[b].sim {
			b = r
		}
		if c[b].sim <= c[i].sim {
			break
		}
		c[i], c[b] = c[b], c[i]
		i = b
	}
	*h = c
	return top
}

type farHeap []cand

func (h *farHeap) push(x cand) {
	c := append(*h, x)
	i := len(c) - 1
	for i > 0 {
		p := (i - 1) / 2
		if c[i].sim >= c[p].sim {
			break
		}
		c[i], c[p] = c[p], c[i]
		i = p
	}
	*h = c
}

func (h *farHeap) pop() cand {
	c := *h
	top := c[0]
	last := len(c) - 1
	c[0] = c[last]
	c = c[:last]
	for i := 0; ; {
		b := 2*i + 1
		if b >= last {
			break
		}
		if r := b + 1; r < last && c[r].sim < c[b].sim {
			b = r
		}
		if c[b].sim >= c[i].sim {
			break
		}
		c[i], c[b] = c[b], c[i]
		i = b
	}
	*h = c
	return top
}

// scratch is the working memory of one walk: a visited bitset (at 100k
// nodes 12.5 KB, cleared in no time and kept in L1), the two heaps and the
// query's code.
type scratch struct {
	seenBits []uint64
	next     nearHeap // to expand, best first
	found    farHeap  // results so far, worst on top
	out      []cand
	code     []int8
	fresh    []uint32 // unvisited neighbours of the node being expanded
	seen     int      // nodes visited, for measurements
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// begin clears the visited set for nodes below n.
func (s *scratch) begin(n int) {
	w := (n + 63) / 64
	if cap(s.seenBits) < w {
		s.seenBits = make([]uint64, w+w/4+1)
	}
	s.seenBits = s.seenBits[:cap(s.seenBits)]
	clear(s.seenBits[:w])
}

// visit marks n and tells whether it was unmarked.
func (s *scratch) visit(n uint32) bool {
	w, b := n>>6, uint64(1)<<(n&63)
	if s.seenBits[w]&b != 0 {
		return false
	}
	s.seenBits[w] |= b
	s.seen++
	return true
}
