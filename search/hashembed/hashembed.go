// Package hashembed is the built-in embedder: text to a feature-hashed bag
// of stemmed words, word bigrams and character n-grams. It needs no model
// and no network, and it is deterministic, so search works out of the box.
// It is lexical at heart: its value next to BM25 is fuzzy matching
// (inflections the stemmer misses, compounds, typos via n-grams) and phrase
// evidence via bigrams. The search package records Name with every index
// built by it.
package hashembed

import (
	"context"
	"math"

	porter "github.com/blevesearch/go-porterstemmer"

	"github.com/snowclaw/snowclaw/internal/par"
	"github.com/snowclaw/snowclaw/search/vector"
)

// Name is recorded with indexes built by this embedder; bump the version
// whenever its output changes, so old indexes are rebuilt instead of
// compared against incompatible vectors.
const Name = "builtin-hash-v1"

// Dim is the vectors' dimension.
const Dim = 512

// Embedder is the embedder (search.Embedder).
type Embedder struct{}

func (Embedder) Name() string { return Name }
func (Embedder) Dim() int     { return Dim }

// Embed embeds texts on every core when there are enough of them (a
// rebuild's batches of 1,000; see internal/par): each text's vector
// depends on that text alone, so the split changes nothing.
func (e Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	err := par.Ranges(len(texts), func(lo, hi int) error { return embedRange(ctx, texts[lo:hi], out[lo:hi]) })
	if err != nil {
		return nil, err
	}
	return out, nil
}

func embedRange(ctx context.Context, texts []string, out [][]float32) error {
	var fb featureBag
	for i, t := range texts {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		v := make([]float32, Dim)
		fb.reset()
		fb.addText(t)
		fb.project(v)
		out[i] = v
	}
	return nil
}

// Feature weights: whole words carry the meaning; bigrams reward shared
// phrases; n-grams only rescue near misses, so each word's n-grams together
// weigh less than the word.
const (
	wUnigram = 1.0
	wBigram  = 0.6
	wNgrams  = 0.5 // shared by all n-grams of one word
	wCommon  = 0.35
	ngramLen = 4
)

// featureBag sums the features of one text straight into their
// dimensions (with the sign hash, see project) and stems each distinct word
// once. It used to collect the features in a map keyed by hash and build
// every feature's string to hash it: two thirds of the embedder's time.
type featureBag struct {
	acc   [Dim]float64
	words []string
	stems map[string]wordInfo // per distinct word of the text
	gram  []byte              // "^word$"
	at    []int               // rune starts in gram, then len(gram)
}

type wordInfo struct {
	n   int // occurrences
	stm string
}

func (fb *featureBag) reset() {
	if fb.stems == nil {
		fb.stems = make(map[string]wordInfo, 16)
	}
	fb.acc = [Dim]float64{}
	clear(fb.stems)
	fb.words = fb.words[:0]
}

// add folds feature h into its dimension with a sign hash, so collisions
// cancel on average instead of piling up.
func (fb *featureBag) add(h uint64, w float64) {
	if h>>63 == 1 {
		w = -w
	}
	fb.acc[h%Dim] += w
}

// Hashes of the feature prefixes, which hashMore continues: features hash
// as the strings "w:"+stem, "b:"+stem+" "+stem and "g:"+n-gram always did
// (stored vectors depend on it), without building them.
var hashW, hashB, hashG = Hash("w:"), Hash("b:"), Hash("g:")

// addText counts features with a sublinear term frequency: repeated words
// add log-scaled weight so one chatty word cannot dominate a message.
func (fb *featureBag) addText(s string) {
	for _, w := range Words(s) {
		if stopWords[w] {
			fb.words = append(fb.words, "")
			continue
		}
		wi, ok := fb.stems[w]
		if !ok {
			wi.stm = porter.StemString(w)
		}
		wi.n++
		fb.stems[w] = wi
		fb.words = append(fb.words, w)
	}
	for w, wi := range fb.stems {
		damp := 1.0
		if commonWords[w] {
			damp = wCommon
		}
		lw := damp * (1 + math.Log(float64(wi.n)))
		fb.add(hashMore(hashW, wi.stm), wUnigram*lw)
		fb.addNgrams(w, wNgrams*lw)
	}
	for i := 1; i < len(fb.words); i++ {
		a, b := fb.words[i-1], fb.words[i]
		if a == "" || b == "" {
			continue
		}
		fb.add(hashMore(hashMore(hashMore(hashB, fb.stems[a].stm), " "), fb.stems[b].stm), wBigram)
	}
}

// addNgrams shares weight among the n-grams of "^w$" (ngramLen runes
// each; the whole of it when shorter); words under 3 runes have none.
func (fb *featureBag) addNgrams(w string, weight float64) {
	fb.gram = append(append(append(fb.gram[:0], '^'), w...), '$')
	fb.at = fb.at[:0]
	for i := range string(fb.gram) {
		fb.at = append(fb.at, i)
	}
	runes := len(fb.at)
	if runes < 5 { // w under 3 runes
		return
	}
	fb.at = append(fb.at, len(fb.gram))
	if runes <= ngramLen {
		fb.add(hashMoreBytes(hashG, fb.gram), weight)
		return
	}
	n := runes - ngramLen + 1
	for i := range n {
		fb.add(hashMoreBytes(hashG, fb.gram[fb.at[i]:fb.at[i+ngramLen]]), weight/float64(n))
	}
}

// project writes the sums into v, scaled to unit length.
func (fb *featureBag) project(v []float32) {
	for i, x := range fb.acc {
		v[i] = float32(x)
	}
	vector.Normalize(v)
}
