package locomo

import (
	"context"
	"fmt"

	"github.com/snowclaw/snowclaw/search"
)

// Evaluate indexes each conversation into its own search.Index (so a query
// only ever sees its own conversation) and scores the top 10 of every
// question. dir returns the index directory for a conversation ("" keeps
// it in RAM).
func Evaluate(ctx context.Context, convs []Conversation, opts search.Options, dir func(sampleID string) string) (*Scores, error) {
	var s Scores
	for _, c := range convs {
		o := opts
		if dir != nil {
			o.Dir = dir(c.SampleID)
		}
		ix, err := search.Open(o)
		if err != nil {
			return nil, fmt.Errorf("locomo: %s: %w", c.SampleID, err)
		}
		err = scoreConversation(ctx, ix, c, &s)
		if cerr := ix.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("locomo: %s: %w", c.SampleID, err)
		}
	}
	return &s, nil
}

func scoreConversation(ctx context.Context, ix *search.Index, c Conversation, s *Scores) error {
	if err := ix.Index(ctx, c.Docs()...); err != nil {
		return err
	}
	for _, q := range c.Questions {
		res, err := ix.Search(ctx, search.Query{Text: q.Text, Limit: 10})
		if err != nil {
			return err
		}
		ranked := make([]string, len(res))
		for i, r := range res {
			ranked[i] = r.Doc.ID
		}
		s.Add(q.Category, ranked, q.Gold)
	}
	return nil
}
