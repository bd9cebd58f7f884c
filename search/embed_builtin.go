package search

import (
	"context"
	"math"
	"unicode"
	"unicode/utf8"

	porter "github.com/blevesearch/go-porterstemmer"
	"github.com/snowclaw/snowclaw/search/vector"
)

// BuiltinEmbedderName is recorded with indexes built by the built-in
// embedder; bump the version whenever its output changes, so old indexes
// are rebuilt instead of compared against incompatible vectors.
const BuiltinEmbedderName = "builtin-hash-v1"

const builtinDim = 512

// builtinEmbedder maps text to a feature-hashed bag of stemmed words, word
// bigrams and character n-grams. It needs no model and no network, and it is
// deterministic, so search works out of the box. It is lexical at heart: its
// value next to BM25 is fuzzy matching (inflections the stemmer misses,
// compounds, typos via n-grams) and phrase evidence via bigrams.
type builtinEmbedder struct{}

// NewBuiltinEmbedder returns the embedder used when Options.Embedder is nil.
func NewBuiltinEmbedder() Embedder { return builtinEmbedder{} }

func (builtinEmbedder) Name() string { return BuiltinEmbedderName }
func (builtinEmbedder) Dim() int     { return builtinDim }

func (e builtinEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var fb featureBag
	for i, t := range texts {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		v := make([]float32, builtinDim)
		fb.reset()
		fb.addText(t)
		fb.project(v)
		out[i] = v
	}
	return out, nil
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
	acc   [builtinDim]float64
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
	fb.acc = [builtinDim]float64{}
	clear(fb.stems)
	fb.words = fb.words[:0]
}

// add folds feature h into its dimension with a sign hash, so collisions
// cancel on average instead of piling up.
func (fb *featureBag) add(h uint64, w float64) {
	if h>>63 == 1 {
		w = -w
	}
	fb.acc[h%builtinDim] += w
}

// Hashes of the feature prefixes, which hashMore continues: features hash
// as the strings "w:"+stem, "b:"+stem+" "+stem and "g:"+n-gram always did
// (stored vectors depend on it), without building them.
var hashW, hashB, hashG = hashString("w:"), hashString("b:"), hashString("g:")

// addText counts features with a sublinear term frequency: repeated words
// add log-scaled weight so one chatty word cannot dominate a message.
func (fb *featureBag) addText(s string) {
	for _, w := range splitWords(s) {
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

// splitWords lower-cases s and cuts it into runs of letters and digits.
// Apostrophes inside a word are dropped ("don't" → "dont") and a trailing
// possessive "'s" is removed, like the BM25 analyzer does. The words are
// cut from one string, not allocated one by one.
func splitWords(s string) []string {
	b := make([]byte, 0, len(s))
	var ends []int
	start, apos := 0, false // the word under way is b[start:]; it has an apostrophe
	flush := func() {
		if len(b) == start {
			return
		}
		if n := len(b) - start; n > 2 && b[len(b)-2] == '\'' && b[len(b)-1] == 's' {
			b = b[:len(b)-2]
		}
		if apos {
			j := start
			for _, c := range b[start:] {
				if c != '\'' {
					b[j] = c
					j++
				}
			}
			b = b[:j]
		}
		ends = append(ends, len(b))
		start, apos = len(b), false
	}
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b = utf8.AppendRune(b, unicode.ToLower(r))
		case (r == '\'' || r == '’') && len(b) > start:
			b, apos = append(b, '\''), true
		default:
			flush()
		}
	}
	flush()
	all := string(b)
	words := make([]string, len(ends))
	from := 0
	for i, end := range ends {
		words[i], from = all[from:end], end
	}
	return words
}

// hashString is FNV-1a, 64 bit: stable across runs and platforms, which the
// stored vectors depend on.
func hashString(s string) uint64 { return hashMore(14695981039346656037, s) }

// hashMore is hashString of what h hashed followed by s.
func hashMore(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func hashMoreBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}
