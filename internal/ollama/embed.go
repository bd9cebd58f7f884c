package ollama

import (
	"context"
	"errors"
	"strings"

	"github.com/ollama/ollama/api"
)

// Embed sends texts to /api/embed in one request and returns the vectors
// the server gave, retrying transient failures (a timeout among them).
// It does not check their number or dimension: that is the caller's.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	input := make([]string, len(texts))
	for i, t := range texts {
		// Ollama may fail on an input with no tokens; a blank still gets
		// a vector of the right dimension.
		if strings.TrimSpace(t) == "" {
			t = " "
		}
		input[i] = t
	}
	req := &api.EmbedRequest{Model: c.model, Input: input}
	var vecs [][]float32
	err := c.call(ctx, opEmbed, func(ctx context.Context) error {
		resp, err := c.api.Embed(ctx, req)
		if err == nil && resp == nil {
			err = errors.New("empty response")
		}
		if err != nil {
			return err
		}
		vecs = resp.Embeddings
		return nil
	})
	return vecs, err
}
