package hashembed

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode"

	porter "github.com/blevesearch/go-porterstemmer"
	"github.com/snowclaw/snowclaw/internal/eval/benchcorpus"
	"github.com/snowclaw/snowclaw/search/vector"
)

// referenceEmbed is the built-in embedder as first written (strings built
// for every feature and hashed whole): the vectors stored in every index
// are its output, so the faster one must give the same.
func referenceEmbed(s string) []float32 {
	w := map[uint64]float64{}
	tf := map[string]int{}
	var words []string
	for _, x := range referenceSplitWords(s) {
		if stopWords[x] {
			words = append(words, "")
			continue
		}
		tf[x]++
		words = append(words, x)
	}
	for x, n := range tf {
		damp := 1.0
		if commonWords[x] {
			damp = wCommon
		}
		lw := damp * (1 + math.Log(float64(n)))
		w[Hash("w:"+porter.StemString(x))] += wUnigram * lw
		var grams []string
		if r := []rune("^" + x + "$"); len(r) >= 5 && len(r) <= ngramLen {
			grams = []string{"g:" + string(r)}
		} else if len(r) > ngramLen {
			for i := 0; i+ngramLen <= len(r); i++ {
				grams = append(grams, "g:"+string(r[i:i+ngramLen]))
			}
		}
		for _, g := range grams {
			w[Hash(g)] += wNgrams * lw / float64(len(grams))
		}
	}
	for i := 1; i < len(words); i++ {
		if a, b := words[i-1], words[i]; a != "" && b != "" {
			w[Hash("b:"+porter.StemString(a)+" "+porter.StemString(b))] += wBigram
		}
	}
	v := make([]float32, Dim)
	for h, x := range w {
		if h>>63 == 1 {
			v[h%Dim] -= float32(x)
		} else {
			v[h%Dim] += float32(x)
		}
	}
	vector.Normalize(v)
	return v
}

// referenceSplitWords is Words as first written, a string per word.
func referenceSplitWords(s string) []string {
	var words []string
	var buf []rune
	flush := func() {
		if len(buf) > 0 {
			w := string(buf)
			if n := len(w); n > 2 && w[n-2:] == "'s" {
				w = w[:n-2]
			}
			words = append(words, strings.ReplaceAll(w, "'", ""))
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

func FuzzWords(f *testing.F) {
	for _, s := range []string{"don't won’t it's Alice's", "x's 's '' a''s", "naïve café", "a\xffb", "ΣΑΣ İ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Words(s), referenceSplitWords(s); !slices.Equal(got, want) {
			t.Fatalf("Words(%q) = %q, want %q", s, got, want)
		}
	})
}

func TestBuiltinEmbedder_SameVectors(t *testing.T) {
	texts := []string{"", "a", "of the", "tea", "Tea tea TEA tea!", "don't won’t it's Alice's", "naïve café résumé",
		"日本語のテキスト", "x1 y22 z333", "ab abc abcd abcde", "running runner runs ran", strings.Repeat("kubernetes ", 40),
		"a\xffb caf\xe9", "x's 's '' a''s b’s", "Décidé: on passe à Postgres 16 vendredi", "e\u0301te\u0301 ÉTÉ été"}
	for _, m := range benchcorpus.Generate(3, 300) {
		texts = append(texts, m.Content)
	}
	got, err := Embedder{}.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		want := referenceEmbed(text)
		for j := range want {
			// map order decides the order of float additions, in both
			if d := got[i][j] - want[j]; d > 1e-6 || d < -1e-6 {
				t.Fatalf("Embed(%q)[%d] = %v, want %v", text, j, got[i][j], want[j])
			}
		}
	}
}

// Embedding a text allocates for stemming its words and little else: not
// per feature (n-grams, bigrams), as it did (7 per word).
func TestBuiltinEmbedder_Allocs(t *testing.T) {
	text := []string{benchcorpus.Generate(5, 1)[0].Content}
	e := Embedder{}
	words := len(Words(text[0]))
	n := testing.AllocsPerRun(50, func() { _, _ = e.Embed(context.Background(), text) })
	if n > float64(2*words) {
		t.Errorf("Embed of %d words: %v allocations", words, n)
	}
}
