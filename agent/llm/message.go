// Package llm talks to the language model that writes the agent's replies:
// Ollama's chat API, behind a small interface so the agent can run with no
// model at all.
package llm

// Message is one chat message as the model sees it.
type Message struct {
	Role    string `json:"role"` // "system", "user" or "assistant"
	Content string `json:"content"`
}

// Roles of a chat message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)
