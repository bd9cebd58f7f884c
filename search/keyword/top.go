package keyword

// top keeps the k best docs of a Search: the higher score first, the
// smaller ID on a tie, as vector.TopK orders hits. It names a doc (asks
// the caller's id for its ID) only when a tie has to be broken or the
// doc is returned: naming reads the doc behind the slot, a cache miss
// for nearly every doc a query scores, and most docs pushed are evicted
// again. The heap is written out rather than container/heap's, whose
// Push boxes every entry into an interface (an allocation per push).
type top struct {
	k  int
	h  []topEntry // min-heap: h[0] is the worst kept
	id func(part int, slot uint32) string
}

type topEntry struct {
	score float64
	part  int32
	slot  uint32
	id    string
	named bool
}

func newTop(k int, id func(part int, slot uint32) string) *top {
	return &top{k: k, h: make([]topEntry, 0, max(k, 0)), id: id}
}

func (t *top) name(e *topEntry) string {
	if !e.named {
		e.id, e.named = t.id(int(e.part), e.slot), true
	}
	return e.id
}

// worse tells whether a is evicted before b.
func (t *top) worse(a, b *topEntry) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return t.name(a) > t.name(b)
}

// full tells whether k docs are kept; min is then the worst score kept.
func (t *top) full() bool   { return len(t.h) >= t.k }
func (t *top) min() float64 { return t.h[0].score }

// push offers the doc in part's slot: kept while fewer than k are, or
// when it beats the worst kept doc, which it then replaces.
func (t *top) push(score float64, part int, slot uint32) {
	e := topEntry{score: score, part: int32(part), slot: slot}
	switch {
	case t.k <= 0:
	case len(t.h) < t.k:
		t.h = append(t.h, e)
		t.up(len(t.h) - 1)
	case t.worse(&t.h[0], &e):
		t.h[0] = e
		t.down(0)
	}
}

func (t *top) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !t.worse(&t.h[i], &t.h[p]) {
			return
		}
		t.h[i], t.h[p] = t.h[p], t.h[i]
		i = p
	}
}

func (t *top) down(i int) {
	n := len(t.h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		w := l
		if r := l + 1; r < n && t.worse(&t.h[r], &t.h[l]) {
			w = r
		}
		if !t.worse(&t.h[w], &t.h[i]) {
			return
		}
		t.h[i], t.h[w] = t.h[w], t.h[i]
		i = w
	}
}

// sorted returns the kept docs best first, named, and leaves t empty.
func (t *top) sorted() []Hit {
	out := make([]Hit, len(t.h))
	for i := len(t.h) - 1; i >= 0; i-- {
		e := &t.h[0]
		out[i] = Hit{ID: t.name(e), Score: e.score}
		last := len(t.h) - 1
		t.h[0] = t.h[last]
		t.h = t.h[:last]
		t.down(0)
	}
	return out
}
