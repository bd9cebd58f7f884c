// Package keyword is the keyword side of the search engine: text analysed
// into terms (bleve's English analyzer), an inverted index per partition
// (Postings) and BM25 ranking over any set of partitions (Search), which
// reads only as much of the postings as the k best need (MaxScore).
//
// It knows nothing of docs, scopes or readers: a partition is a set of
// slots, and the caller maps a slot back to its doc. The search package
// decides which partitions a reader may read and hands exactly those to
// Search, so document frequencies and lengths come from them alone.
package keyword

import (
	"fmt"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/mapping"

	"github.com/snowclaw/snowclaw/internal/par"
)

// AnalyzerName is bleve's English analyzer: unicode words, possessive
// stripping, lower case, the English stop list and the Porter stemmer.
const AnalyzerName = en.AnalyzerName

// NewAnalyzer returns the analyzer that indexes text; queries go through
// the same one, so query terms are made exactly like indexed terms.
func NewAnalyzer() (analysis.Analyzer, error) {
	a := mapping.NewIndexMapping().AnalyzerNamed(AnalyzerName)
	if a == nil {
		return nil, fmt.Errorf("keyword: analyzer %q not registered", AnalyzerName)
	}
	return a, nil
}

// TermFreq is one distinct term of an analysed text.
type TermFreq struct {
	Term string
	N    uint32
}

// Analysed is a text as the keyword index keeps it.
type Analysed struct {
	Terms  []TermFreq
	Length int32 // tokens after analysis (stop words removed), as BM25 counts
}

// Analyse splits text into its distinct terms and their counts.
func Analyse(a analysis.Analyzer, text string) Analysed {
	toks := a.Analyze([]byte(text))
	pos := make(map[string]int, len(toks))
	out := Analysed{Length: int32(len(toks))}
	for _, t := range toks {
		term := string(t.Term)
		if i, ok := pos[term]; ok {
			out.Terms[i].N++
			continue
		}
		pos[term] = len(out.Terms)
		out.Terms = append(out.Terms, TermFreq{Term: term, N: 1})
	}
	return out
}

// AnalyseAll analyses n texts (text(i) is the i-th), on every core when
// there are enough of them (a rebuild's batches; see internal/par).
func AnalyseAll(a analysis.Analyzer, n int, text func(i int) string) []Analysed {
	out := make([]Analysed, n)
	par.For(n, func(i int) { out[i] = Analyse(a, text(i)) })
	return out
}
