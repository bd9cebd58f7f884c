package search

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
)

// textField is the one bleve field we index: the doc text plus its topic and
// t tags, so a search for a topic word finds the memories filed under it.
const textField = "text"

// analyzerName is bleve's English analyzer: unicode words, possessive
// stripping, lower case, the English stop list and the Porter stemmer.
const analyzerName = en.AnalyzerName

// newMapping builds the index mapping. Nothing is stored in bleve: the docs
// themselves live in our own log and RAM map, so bleve only ranks.
func newMapping() *mapping.IndexMappingImpl {
	f := mapping.NewTextFieldMapping()
	f.Analyzer = analyzerName
	f.Store = false
	f.IncludeTermVectors = false
	f.IncludeInAll = false
	f.DocValues = false

	dm := mapping.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt(textField, f)

	m := mapping.NewIndexMapping()
	m.DefaultMapping = dm
	m.DefaultAnalyzer = analyzerName
	m.StoreDynamic = false
	m.IndexDynamic = false
	m.DocValuesDynamic = false
	// bleve ranks with TF-IDF unless told otherwise.
	m.ScoringModel = index.BM25Scoring
	return m
}

// bleveDoc is what bleve sees of a Doc.
type bleveDoc struct {
	Text string `json:"text"`
}

func toBleve(d *Doc) bleveDoc {
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
	return bleveDoc{Text: b.String()}
}

// BM25 parameters. Memories and chat lines are short and of very uneven
// length; with the usual b = 0.75 a one-line reply that merely names a
// person outranks the message that answers the question. Weaker length
// normalisation (b = 0.1) and earlier term-frequency saturation (k1 = 0.8)
// lifted LoCoMo recall@10 from 72.7 to 73.1 overall and multi-hop from 41.0
// to 43.4. bleve keeps these as package variables, so this sets them for
// the process; nothing else here uses bleve.
func init() {
	bsearch.BM25_b = 0.1
	bsearch.BM25_k1 = 0.8
}

// newMemIndex makes the RAM-only index for volatile docs. bleve.NewMemOnly
// would use the upsidedown engine, which keeps no field-length statistics,
// so its hits would silently fall back to TF-IDF and score on another scale
// than the disk index; scorch with an empty path is RAM-only and does BM25.
func newMemIndex() (bleve.Index, error) {
	return bleve.NewUsing("", newMapping(), scorch.Name, scorch.Name, nil)
}

// createDiskIndex makes a new bleve index at path.
func createDiskIndex(path string) (bleve.Index, error) {
	return bleve.New(path, newMapping())
}

// openDiskIndex opens an existing bleve index. bleve has been seen to panic
// on some damaged files; a damaged derived index must become an error the
// relay can act on, not a crash.
func openDiskIndex(path string) (idx bleve.Index, err error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w: bleve index: %v", ErrNeedsRebuild, err)
	}
	defer func() {
		if r := recover(); r != nil {
			idx, err = nil, fmt.Errorf("%w: bleve index: %v", ErrNeedsRebuild, r)
		}
	}()
	idx, err = bleve.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: bleve index: %v", ErrNeedsRebuild, err)
	}
	if im, ok := idx.Mapping().(*mapping.IndexMappingImpl); !ok || im.ScoringModel != index.BM25Scoring {
		_ = idx.Close()
		return nil, fmt.Errorf("%w: bleve index has another mapping", ErrNeedsRebuild)
	}
	return idx, nil
}

// queryAnalyzer returns the analyzer that bleve applies to the text field,
// so query terms are made exactly like indexed terms.
func queryAnalyzer() (analysis.Analyzer, error) {
	a := newMapping().AnalyzerNamed(analyzerName)
	if a == nil {
		return nil, fmt.Errorf("search: analyzer %q not registered", analyzerName)
	}
	return a, nil
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

// searchText runs a weighted term disjunction over both bleve indexes with
// global BM25 statistics, so hits from the small RAM index are scored on the
// same scale as hits from the disk index.
func searchText(ctx context.Context, alias bleve.IndexAlias, terms []weightedTerm, size int) ([]textHit, error) {
	if len(terms) == 0 || size <= 0 {
		return nil, nil
	}
	qs := make([]query.Query, 0, len(terms))
	for _, t := range terms {
		tq := query.NewTermQuery(t.Term)
		tq.SetField(textField)
		tq.SetBoost(t.Weight)
		qs = append(qs, tq)
	}
	q := query.NewDisjunctionQuery(qs)
	req := bleve.NewSearchRequestOptions(q, size, 0, false)
	req.SortBy([]string{"-_score", "_id"})
	ctx = context.WithValue(ctx, bsearch.SearchTypeKey, bsearch.GlobalScoring)
	res, err := alias.SearchInContext(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("search: bleve: %w", err)
	}
	hits := make([]textHit, 0, len(res.Hits))
	for _, h := range res.Hits {
		hits = append(hits, textHit{ID: h.ID, Score: h.Score})
	}
	return hits, nil
}
