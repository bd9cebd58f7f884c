package llmtest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"
)

// The fake honours `format` the only way it can: an answer a model held to
// the format could not write is recorded as a violation; the token counts
// of the final object count words, streaming or not.
func TestServer_FormatAndUsage(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	tests := []struct {
		name      string
		format    json.RawMessage
		answer    string
		violation string
	}{
		{"schema kept", schema, `{"n": 3}`, ""},
		{"schema broken", schema, `{"n": "three"}`, "type"},
		{"not JSON", schema, `{"n": 3`, "not JSON"},
		{"json kept", json.RawMessage(`"json"`), `[1, 2]`, ""},
		{"json broken", json.RawMessage(`"json"`), `one two`, "not JSON"},
		{"no format", nil, `free text`, ""},
	}
	for _, tc := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(tc.name, func(t *testing.T) {
				s := NewServer(t, Script(tc.answer))
				var got strings.Builder
				var last api.ChatResponse
				req := &api.ChatRequest{Model: "m", Messages: []api.Message{{Role: "user", Content: "count to three please"}}, Stream: &stream, Format: tc.format}
				err := client(t, s).Chat(context.Background(), req, func(r api.ChatResponse) error {
					got.WriteString(r.Message.Content)
					last = r
					return nil
				})
				if err != nil || got.String() != tc.answer {
					t.Fatalf("answer %q, %v; want %q", got.String(), err, tc.answer)
				}
				if last.PromptEvalCount != 4 || last.EvalCount != len(strings.Fields(tc.answer)) {
					t.Errorf("usage prompt %d, eval %d", last.PromptEvalCount, last.EvalCount)
				}
				v := s.Violations()
				if tc.violation == "" && len(v) != 0 || tc.violation != "" && (len(v) != 1 || !strings.Contains(v[0].Reason, tc.violation)) {
					t.Errorf("violations = %+v, want one about %q", v, tc.violation)
				}
				if Structured(s.Requests()[0]) != (tc.format != nil) {
					t.Error("Structured misreads the request")
				}
			})
		}
	}
}
