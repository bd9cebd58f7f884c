package search

import (
	"strings"

	"github.com/blevesearch/bleve/v2/analysis"

	"github.com/snowclaw/snowclaw/search/keyword"
)

// The keyword side of the index is our own BM25 over an inverted index in
// RAM (search/keyword), one per partition (parts.go). It used to be bleve;
// bleve keeps one set of statistics per index and reads its segments from
// disk, where a damaged byte panicked the process. Here nothing of the
// keyword index is on disk: it is rebuilt from the checksummed doc log on
// Open, and each search computes document frequencies and lengths over
// exactly the partitions its reader may read.

// analyzerName is bleve's English analyzer (keyword.AnalyzerName).
const analyzerName = keyword.AnalyzerName

// BM25 parameters, set in search/keyword.
const (
	bm25B  = keyword.B
	bm25K1 = keyword.K1
)

type (
	analysed     = keyword.Analysed
	weightedTerm = keyword.Term
	textHit      = keyword.Hit
)

// indexedText is what the keyword index and the embedder see of a Doc: the
// doc text plus its topic and t tags, so a search for a topic word finds the
// memories filed under it.
func indexedText(d *Doc) string {
	var b strings.Builder
	b.WriteString(d.Text)
	if d.Topic != "" {
		b.WriteString("\n")
		b.WriteString(strings.ReplaceAll(d.Topic, "/", " "))
	}
	for _, t := range d.Tags["t"] {
		b.WriteString("\n")
		b.WriteString(t)
	}
	return b.String()
}

// queryAnalyzer returns the analyzer that indexes text, so query terms are
// made exactly like indexed terms.
var queryAnalyzer = keyword.NewAnalyzer

func analyse(a analysis.Analyzer, d *Doc) analysed { return keyword.Analyse(a, indexedText(d)) }

// analyseAll analyses docs on every core.
func analyseAll(a analysis.Analyzer, docs []*Doc) []analysed {
	return keyword.AnalyseAll(a, len(docs), func(i int) string { return indexedText(docs[i]) })
}
