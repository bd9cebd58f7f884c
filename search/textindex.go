package search

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/mapping"
)

// The keyword side of the index is our own BM25 over an inverted index in
// RAM, split into partitions (parts.go). It used to be bleve; bleve keeps
// one set of statistics per index and reads its segments from disk, where
// a damaged byte panicked the process. Here nothing of the keyword index
// is on disk: it is rebuilt from the checksummed doc log on Open, and each
// search computes document frequencies and lengths over exactly the
// partitions its reader may read.

// analyzerName is bleve's English analyzer: unicode words, possessive
// stripping, lower case, the English stop list and the Porter stemmer.
const analyzerName = en.AnalyzerName

// BM25 parameters. Memories and chat lines are short and of very uneven
// length; with the usual b = 0.75 a one-line reply that merely names a
// person outranks the message that answers the question. Weaker length
// normalisation (b = 0.1) and earlier term-frequency saturation (k1 = 0.8)
// lifted LoCoMo recall@10 from 72.7 to 73.1 overall and multi-hop from 41.0
// to 43.4.
const (
	bm25B  = 0.1
	bm25K1 = 0.8
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
func queryAnalyzer() (analysis.Analyzer, error) {
	a := mapping.NewIndexMapping().AnalyzerNamed(analyzerName)
	if a == nil {
		return nil, fmt.Errorf("search: analyzer %q not registered", analyzerName)
	}
	return a, nil
}

// termFreq is one distinct term of an analysed doc.
type termFreq struct {
	term string
	n    uint32
}

// analysed is a doc's text as the keyword index keeps it.
type analysed struct {
	terms  []termFreq
	length int32 // tokens after analysis (stop words removed), as BM25 counts
}

func analyse(a analysis.Analyzer, d *Doc) analysed {
	toks := a.Analyze([]byte(indexedText(d)))
	pos := make(map[string]int, len(toks))
	out := analysed{length: int32(len(toks))}
	for _, t := range toks {
		term := string(t.Term)
		if i, ok := pos[term]; ok {
			out.terms[i].n++
			continue
		}
		pos[term] = len(out.terms)
		out.terms = append(out.terms, termFreq{term: term, n: 1})
	}
	return out
}

// analyseAll analyses docs on every core. A panic in a worker is raised
// again in the caller's goroutine, where the index's recovery sees it.
func analyseAll(a analysis.Analyzer, docs []*Doc) []analysed {
	out := make([]analysed, len(docs))
	workers := min(runtime.GOMAXPROCS(0), max(1, len(docs)/64))
	var wg sync.WaitGroup
	var failed atomic.Value
	for w := range workers {
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					failed.Store(fmt.Sprint(r))
				}
			}()
			for i := w; i < len(docs); i += workers {
				out[i] = analyse(a, docs[i])
			}
		})
	}
	wg.Wait()
	if r := failed.Load(); r != nil {
		panic(r)
	}
	return out
}

// weightedTerm is one analysed query term with its boost.
type weightedTerm struct {
	Term   string
	Weight float64
}

// textHit is one BM25 hit.
type textHit struct {
	ID    string
	Score float64
}
