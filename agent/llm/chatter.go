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
