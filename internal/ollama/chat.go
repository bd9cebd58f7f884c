package ollama

import (
	"context"
	"strings"

	"github.com/ollama/ollama/api"
)

// Chat sends msgs to /api/chat without streaming and returns the reply,
// retrying connection failures and HTTP 5xx/429. options are the model
// options (temperature, num_ctx); nil leaves the model's own. An empty
// reply is an error (ErrEmptyReply) and is not retried.
func (c *Client) Chat(ctx context.Context, msgs []api.Message, options map[string]any) (string, error) {
	if len(msgs) == 0 {
		return "", c.Errorf("model %q: no messages to send", c.model)
	}
	stream := false
	req := &api.ChatRequest{Model: c.model, Messages: msgs, Stream: &stream, Options: options}
	var reply string
	err := c.call(ctx, opChat, func(ctx context.Context) error {
		rec, _ := ctx.Value(statusRecordKey{}).(*statusRecord)
		// Even with stream:false a proxy or an older server may stream,
		// so the pieces are joined rather than only the last one kept.
		var b strings.Builder
		err := c.api.Chat(ctx, req, func(r api.ChatResponse) error {
			b.WriteString(r.Message.Content)
			if r.Done && rec != nil {
				rec.done = true
			}
			return nil
		})
		reply = b.String()
		return err
	})
	if err != nil {
		return "", err
	}
	reply = stripThinking(reply)
	if strings.TrimSpace(reply) == "" {
		return "", c.describe(opChat, ErrEmptyReply, 0)
	}
	return reply, nil
}

// stripThinking drops a leading <think>…</think> block, which some
// reasoning models write into the content instead of the thinking field:
// it is not meant for the reader. An unclosed block means the model ran
// out of tokens while still thinking, so nothing of it is a reply.
func stripThinking(s string) string {
	t := strings.TrimLeft(s, " \t\r\n")
	if !strings.HasPrefix(t, "<think>") {
		return s
	}
	end := strings.Index(t, "</think>")
	if end < 0 {
		return ""
	}
	return strings.TrimLeft(t[end+len("</think>"):], " \t\r\n")
}
