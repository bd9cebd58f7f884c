package llm

import "context"

// Chatter writes the model's next message in a conversation. The agent
// depends on this interface rather than on Ollama so that it can run with
// no model configured and so that tests can substitute a fake server.
type Chatter interface {
	// Chat returns the assistant's reply to msgs, which are sent in order.
	// An empty reply is an error: the agent has nothing to publish.
	Chat(ctx context.Context, msgs []Message) (string, error)
	// Name identifies the backend and model in logs, e.g. "ollama/llama3.2".
	Name() string
}

var _ Chatter = (*Ollama)(nil)

// Reply is a model's answer with its cost in tokens.
type Reply struct {
	Text         string
	PromptTokens int
	OutputTokens int
}

// Structured answers in JSON constrained to a schema (Ollama's `format`).
// The agent's learning needs it; a Chatter without it replies but never
// learns from conversation.
type Structured interface {
	// ChatJSON returns the model's answer to msgs, asked to follow the
	// JSON schema. Whether it does is for the caller to check.
	ChatJSON(ctx context.Context, msgs []Message, schema []byte) (Reply, error)
}

var _ Structured = (*Ollama)(nil)
