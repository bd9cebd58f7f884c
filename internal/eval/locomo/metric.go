package locomo

import (
	"fmt"
	"io"
	"math"
	"sort"
)

// RecallAt is |gold ∩ top-k| / |gold|.
func RecallAt(ranked, gold []string, k int) float64 {
	if len(gold) == 0 {
		return 0
	}
	g := set(gold)
	hit := 0
	for i, id := range ranked {
		if i >= k {
			break
		}
		if g[id] {
			hit++
			delete(g, id) // a duplicate in ranked must not count twice
		}
	}
	return float64(hit) / float64(len(gold))
}

// NDCGAt is NDCG@k with binary relevance, DCG = Σ 1/log2(rank+1).
func NDCGAt(ranked, gold []string, k int) float64 {
	if len(gold) == 0 {
		return 0
	}
	g := set(gold)
	var dcg float64
	for i, id := range ranked {
		if i >= k {
			break
		}
		if g[id] {
			dcg += 1 / math.Log2(float64(i+2))
			delete(g, id)
		}
	}
	var ideal float64
	for i := 0; i < min(k, len(gold)); i++ {
		ideal += 1 / math.Log2(float64(i+2))
	}
	return dcg / ideal
}

func set(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// Scores accumulates the metric over questions, overall and by category.
type Scores struct {
	all   bucket
	byCat map[int]*bucket
}

type bucket struct {
	n               int
	r5, r10, ndcg10 float64
}

// Add scores one ranking.
func (s *Scores) Add(category int, ranked, gold []string) {
	if s.byCat == nil {
		s.byCat = make(map[int]*bucket)
	}
	b := s.byCat[category]
	if b == nil {
		b = &bucket{}
		s.byCat[category] = b
	}
	r5, r10, nd := RecallAt(ranked, gold, 5), RecallAt(ranked, gold, 10), NDCGAt(ranked, gold, 10)
	for _, x := range []*bucket{&s.all, b} {
		x.n++
		x.r5 += r5
		x.r10 += r10
		x.ndcg10 += nd
	}
}

// Summary is one line of the report, in percent.
type Summary struct {
	Name     string
	N        int
	Recall5  float64
	Recall10 float64
	NDCG10   float64
}

func (b *bucket) summary(name string) Summary {
	if b.n == 0 {
		return Summary{Name: name}
	}
	n := float64(b.n)
	return Summary{Name: name, N: b.n, Recall5: 100 * b.r5 / n, Recall10: 100 * b.r10 / n, NDCG10: 100 * b.ndcg10 / n}
}

// Overall returns the summary over all questions.
func (s *Scores) Overall() Summary { return s.all.summary("overall") }

// Category returns the summary of one category.
func (s *Scores) Category(c int) Summary {
	if b := s.byCat[c]; b != nil {
		return b.summary(CategoryNames[c])
	}
	return Summary{Name: CategoryNames[c]}
}

// Write prints the overall and per-category lines.
func (s *Scores) Write(w io.Writer, title string) {
	fmt.Fprintf(w, "%s\n", title)
	lines := []Summary{s.Overall()}
	cats := make([]int, 0, len(s.byCat))
	for c := range s.byCat {
		cats = append(cats, c)
	}
	sort.Ints(cats)
	for _, c := range cats {
		lines = append(lines, s.Category(c))
	}
	for _, l := range lines {
		fmt.Fprintf(w, "  %-12s n=%-4d recall@5 %5.1f  recall@10 %5.1f  NDCG@10 %5.1f\n", l.Name, l.N, l.Recall5, l.Recall10, l.NDCG10)
	}
}
