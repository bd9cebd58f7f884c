package vector_test

import (
	"context"
	"strings"

	"github.com/snowclaw/snowclaw/internal/eval/benchcorpus"
	"github.com/snowclaw/snowclaw/search"
	"github.com/snowclaw/snowclaw/search/vector"
)

func init() {
	vector.Corpus = func(n, nq int) (docs, queries [][]float32, err error) {
		mems := benchcorpus.Generate(1, n)
		texts := make([]string, n)
		for i, m := range mems {
			words := strings.NewReplacer("/", " ", "-", " ", "_", " ").Replace(m.Topic)
			texts[i] = search.EmbedText(&search.Doc{Topic: m.Topic, Text: m.Content + "\n" + words})
		}
		var qtexts []string
		for _, q := range benchcorpus.Queries(mems, 2, nq) {
			qtexts = append(qtexts, q.Text)
		}
		e := search.NewBuiltinEmbedder()
		if docs, err = e.Embed(context.Background(), texts); err != nil {
			return nil, nil, err
		}
		queries, err = e.Embed(context.Background(), qtexts)
		return docs, queries, err
	}
}
