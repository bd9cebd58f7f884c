package ollama

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/ollama/ollama/api"
)

// Chat sends msgs to /api/chat without streaming and returns the reply,
// retrying connection failures and HTTP 5xx/429. options are the model
// options (temperature, num_ctx); nil leaves the model's own. An empty
// reply is an error (ErrEmptyReply) and is not retried.
func (c *Client) Chat(ctx context.Context, msgs []api.Message, options map[string]any) (string, error) {
	r, err := c.ChatFormat(ctx, msgs, options, nil)
	return r.Text, err
}

// Reply is a chat answer with what it cost, as Ollama counts it.
type Reply struct {
	Text         string
	PromptTokens int // prompt_eval_count
	OutputTokens int // eval_count
}

// ChatFormat is Chat with Ollama's structured output: format is a JSON
// schema (or "json") the model's answer is constrained to; nil asks for
// free text. The answer is returned as the model wrote it: checking it
// against the schema is the caller's, since a model may still break it.
func (c *Client) ChatFormat(ctx context.Context, msgs []api.Message, options map[string]any, format json.RawMessage) (Reply, error) {
	if len(msgs) == 0 {
		return Reply{}, c.Errorf("model %q: no messages to send", c.model)
	}
	stream := false
	req := &api.ChatRequest{Model: c.model, Messages: msgs, Stream: &stream, Options: options, Format: format}
	var out Reply
	err := c.call(ctx, opChat, func(ctx context.Context) error {
		rec, _ := ctx.Value(statusRecordKey{}).(*statusRecord)
		// Even with stream:false a proxy or an older server may stream,
		// so the pieces are joined rather than only the last one kept.
		var b strings.Builder
		out = Reply{}
		err := c.api.Chat(ctx, req, func(r api.ChatResponse) error {
			b.WriteString(r.Message.Content)
			if r.Done {
				out.PromptTokens, out.OutputTokens = r.PromptEvalCount, r.EvalCount
				if rec != nil {
					rec.done = true
				}
			}
			return nil
		})
		out.Text = b.String()
		return err
	})
	if err != nil {
		return Reply{}, err
	}
	out.Text = stripThinking(out.Text)
	if strings.TrimSpace(out.Text) == "" {
		return Reply{}, c.describe(opChat, ErrEmptyReply, 0)
	}
	return out, nil
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
