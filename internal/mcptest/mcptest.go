// Package mcptest holds the client-side helpers the MCP end-to-end tests
// share: calling a tool through the official SDK's client and waiting for
// a memory to become searchable.
package mcptest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/internal/testwait"
)

// Call runs a tool and decodes its structured result into out; it returns
// the text of a tool error ("" on success), since a refusal is a result the
// tests assert on, not a failure of the call.
func Call(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any, out any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		if len(res.Content) == 0 {
			t.Fatalf("%s: an error result without text", name)
		}
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			return tc.Text
		}
		t.Fatalf("%s: an error result that is not text", name)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("%s: decoding %s: %v", name, raw, err)
	}
	return ""
}

// Hit is one result of memory_search, as lean as the tool makes it.
type Hit struct {
	ID        string          `json:"id"`
	Kind      int             `json:"kind"`
	Text      string          `json:"text"`
	Tier      snowclaw.Tier   `json:"tier"`
	Topic     string          `json:"topic"`
	Group     string          `json:"group"`
	Source    string          `json:"source"`
	Score     float64         `json:"score"`
	CreatedAt int64           `json:"created_at"`
	Origin    string          `json:"origin"`
	Encrypted bool            `json:"encrypted"`
	Explain   json.RawMessage `json:"explain"`
}

// Results is memory_search's answer.
type Results struct {
	Query   string `json:"q"`
	Results []Hit  `json:"results"`
}

// Find searches until the memory id shows up (the index takes up to a
// second) and returns its hit, or nil once wait is over.
func Find(t testing.TB, cs *mcp.ClientSession, q, id string, wait time.Duration) *Hit {
	t.Helper()
	var hit *Hit
	testwait.Until(wait, func() bool {
		var res Results
		if msg := Call(t, cs, "memory_search", map[string]any{"q": q, "limit": 10}, &res); msg != "" {
			t.Fatalf("memory_search %q: %s", q, msg)
		}
		for i, h := range res.Results {
			if h.ID == id {
				hit = &res.Results[i]
			}
		}
		return hit != nil
	})
	return hit
}
