package keyword

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/snowclaw/snowclaw/search/vector"
)

// exhaustive is the BM25 loop Search replaced: every doc holding a query
// term is scored into a dense accumulator and offered to a TopK. It is the reference Search must
// agree with, hit for hit and bit for bit.
func exhaustive(parts []*Postings, terms []Term, size int, id func(int, uint32) string) []Hit {
	var n, total float64
	for _, p := range parts {
		n += float64(p.docs)
		total += float64(len(p.post))
	}
	if n == 0 || len(terms) == 0 || size <= 0 {
		return nil
	}
	avg := math.Ceil(total / n)
	idf := make([]float64, len(terms))
	var sq float64
	for i, t := range terms {
		df := 0
		for _, p := range parts {
			df += p.DF(t.Term)
		}
		idf[i] = math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
		sq += (t.Weight * idf[i]) * (t.Weight * idf[i])
	}
	qn := 1 / math.Sqrt(sq)
	top := vector.NewTopK(size)
	for pi, p := range parts {
		acc := make([]float64, len(p.flen))
		cnt := make([]uint16, len(p.flen))
		for i, t := range terms {
			l := p.post[t.Term]
			if l == nil {
				continue
			}
			w := t.Weight * idf[i] * qn
			for _, e := range l.p {
				tf := math.Sqrt(float64(e.tf))
				norm := 1 - B + B*p.flen[e.slot]/avg
				acc[e.slot] += idf[i] * (tf * K1) / (tf + K1*norm) * w
				cnt[e.slot]++
			}
		}
		for slot, c := range cnt {
			if c > 0 {
				top.Push(vector.Hit{ID: id(pi, uint32(slot)), Score: acc[slot] * float64(c) / float64(len(terms))})
			}
		}
	}
	var out []Hit
	for _, h := range top.Sorted() {
		out = append(out, Hit(h))
	}
	return out
}

// zipfCorpus fills parts with docs whose terms follow a Zipf law (a few
// terms in most docs, most in few), as the bench corpus and chat do; one
// doc in ten is a copy of an earlier one, so ties happen. Some docs are
// removed and their slots reused, so lists see inserts out of order.
func zipfCorpus(r *rand.Rand, nparts, ndocs, vocab int) ([]*Postings, [][]string) {
	z := rand.NewZipf(r, 1.1, 2, uint64(vocab-1))
	parts := make([]*Postings, nparts)
	ids := make([][]string, nparts)
	var made []Analysed
	for i := range parts {
		parts[i] = NewPostings()
	}
	for d := range ndocs {
		var a Analysed
		if d > 10 && d%10 == 0 {
			a = made[r.Intn(len(made))]
		} else {
			seen := map[string]int{}
			l := 1 + r.Intn(20)
			for range l {
				t := fmt.Sprint("t", z.Uint64())
				if i, ok := seen[t]; ok {
					a.Terms[i].N++
					continue
				}
				seen[t] = len(a.Terms)
				a.Terms = append(a.Terms, TermFreq{Term: t, N: 1})
			}
			a.Length = int32(l)
		}
		made = append(made, a)
		pi := r.Intn(nparts)
		p := parts[pi]
		slot := p.Add(a)
		id := fmt.Sprintf("d%06d", d)
		if int(slot) == len(ids[pi]) {
			ids[pi] = append(ids[pi], id)
		} else {
			ids[pi][slot] = id
		}
		if d%7 == 3 { // remove an earlier doc of this part
			victim := uint32(r.Intn(len(ids[pi])))
			if ids[pi][victim] != "" && victim != slot {
				p.Remove(victim, analysisOf(made, ids[pi][victim]))
				ids[pi][victim] = ""
			}
		}
	}
	return parts, ids
}

func analysisOf(made []Analysed, id string) Analysed {
	var d int
	fmt.Sscanf(id, "d%06d", &d)
	return made[d]
}

// Search returns exactly the exhaustive loop's top k, scores included,
// over Zipf-skewed lists, several parts, ties, reused slots, repeated and
// boosted terms, every depth the search package asks for.
func TestSearch_SameAsExhaustive(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for round := range 40 {
		parts, ids := zipfCorpus(r, 1+round%4, 500+r.Intn(3000), 50+r.Intn(2000))
		id := func(p int, s uint32) string { return ids[p][s] }
		for q := range 25 {
			var terms []Term
			for range 1 + r.Intn(12) {
				terms = append(terms, Term{Term: fmt.Sprint("t", r.Intn(60)), Weight: 0.2 + 2*r.Float64()})
			}
			terms = dedupe(terms)
			size := []int{1, 10, 50, 100, 400}[q%5]
			want := exhaustive(parts, terms, size, id)
			var st Stats
			got := Search(parts, terms, size, id, &st)
			if !slices.Equal(got, want) {
				t.Fatalf("round %d query %v size %d:\n got  %v\n want %v", round, terms, size, got, want)
			}
		}
	}
}

func dedupe(ts []Term) []Term {
	seen := map[string]bool{}
	out := ts[:0]
	for _, t := range ts {
		if !seen[t.Term] {
			seen[t.Term] = true
			out = append(out, t)
		}
	}
	return out
}

// A top-10 query whose terms are in most docs scores a small share of
// them: the point of MaxScore. The exhaustive loop scored every doc
// holding a term.
func TestSearch_PrunesCommonTerms(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	parts, ids := zipfCorpus(r, 1, 20000, 5000)
	id := func(p int, s uint32) string { return ids[p][s] }
	terms := []Term{{Term: "t2", Weight: 1}, {Term: "t3", Weight: 1}, {Term: "t40", Weight: 1}, {Term: "t300", Weight: 1}}
	var st Stats
	got := Search(parts, terms, 10, id, &st)
	if !slices.Equal(got, exhaustive(parts, terms, 10, id)) {
		t.Fatal("pruned search differs from the exhaustive one")
	}
	if st.Postings < 5000 {
		t.Fatalf("corpus too small to show pruning: %d postings", st.Postings)
	}
	if st.Scored*4 > st.Postings {
		t.Fatalf("scored %d docs of %d postings: not pruned", st.Scored, st.Postings)
	}
	t.Logf("scored %d docs for %d postings", st.Scored, st.Postings)
}

// Removing and re-adding keeps lists in slot order (Search relies on it)
// and DF exact.
func TestPostings_SlotOrderAndDF(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	parts, ids := zipfCorpus(r, 2, 5000, 300)
	for pi, p := range parts {
		live := 0
		for _, id := range ids[pi] {
			if id != "" {
				live++
			}
		}
		if p.Docs() != live {
			t.Fatalf("part %d: Docs %d, live slots %d", pi, p.Docs(), live)
		}
		for term, l := range p.post {
			if !slices.IsSortedFunc(l.p, func(a, b posting) int { return int(a.slot) - int(b.slot) }) {
				t.Fatalf("part %d term %s: list out of slot order", pi, term)
			}
			for _, e := range l.p {
				if ids[pi][e.slot] == "" {
					t.Fatalf("part %d term %s: posting for removed slot %d", pi, term, e.slot)
				}
			}
		}
	}
}
