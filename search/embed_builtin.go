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

type featureBag struct {
	w     map[uint64]float64
	words []string
}

func (fb *featureBag) reset() {
	if fb.w == nil {
		fb.w = make(map[uint64]float64, 64)
	}
	clear(fb.w)
	fb.words = fb.words[:0]
}

// addText counts features with a sublinear term frequency: repeated words
// add log-scaled weight so one chatty word cannot dominate a message.
func (fb *featureBag) addText(s string) {
	tf := make(map[string]int, 16)
	for _, w := range splitWords(s) {
		if stopWords[w] {
			fb.words = append(fb.words, "")
			continue
		}
		tf[w]++
		fb.words = append(fb.words, w)
	}
	for w, n := range tf {
		damp := 1.0
		if commonWords[w] {
			damp = wCommon
		}
		lw := damp * (1 + math.Log(float64(n)))
		fb.w[hashString("w:"+porter.StemString(w))] += wUnigram * lw
		grams := charNgrams(w)
		for _, g := range grams {
			fb.w[hashString(g)] += wNgrams * lw / float64(len(grams))
		}
	}
	for i := 1; i < len(fb.words); i++ {
		a, b := fb.words[i-1], fb.words[i]
		if a == "" || b == "" {
			continue
		}
		fb.w[hashString("b:"+porter.StemString(a)+" "+porter.StemString(b))] += wBigram
	}
}

// project folds the features into v with a sign hash, so collisions cancel
// on average instead of piling up, then scales v to unit length.
func (fb *featureBag) project(v []float32) {
	for h, w := range fb.w {
		i := int(h % uint64(len(v)))
		if h>>63 == 1 {
			v[i] -= float32(w)
		} else {
			v[i] += float32(w)
		}
	}
	vector.Normalize(v)
}

// splitWords lower-cases s and cuts it into runs of letters and digits.
// Apostrophes inside a word are dropped ("don't" → "dont") and a trailing
// possessive "'s" is removed, like the BM25 analyzer does.
func splitWords(s string) []string {
	var words []string
	buf := make([]rune, 0, 16)
	flush := func() {
		if len(buf) > 0 {
			w := string(buf)
			if n := len(w); n > 2 && w[n-2:] == "'s" {
				w = w[:n-2]
			}
			words = append(words, stripApos(w))
			buf = buf[:0]
		}
	}
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			buf = append(buf, unicode.ToLower(r))
		case (r == '\'' || r == '’') && len(buf) > 0:
			buf = append(buf, '\'')
		default:
			flush()
		}
	}
	flush()
	return words
}

func stripApos(w string) string {
	out := make([]byte, 0, len(w))
	for i := 0; i < len(w); i++ {
		if w[i] != '\'' {
			out = append(out, w[i])
		}
	}
	return string(out)
}

// charNgrams returns the n-grams of "^word$"; short words yield themselves.
func charNgrams(w string) []string {
	if utf8.RuneCountInString(w) < 3 {
		return nil
	}
	r := []rune("^" + w + "$")
	if len(r) <= ngramLen {
		return []string{"g:" + string(r)}
	}
	out := make([]string, 0, len(r)-ngramLen+1)
	for i := 0; i+ngramLen <= len(r); i++ {
		out = append(out, "g:"+string(r[i:i+ngramLen]))
	}
	return out
}

// hashString is FNV-1a, 64 bit: stable across runs and platforms, which the
// stored vectors depend on.
func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}
