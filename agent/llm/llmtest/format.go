package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/ollama/ollama/api"
)

// A real Ollama constrains a chat's answer to the request's `format`: "json"
// or a JSON schema. The fake cannot generate, so it checks instead: a
// scripted answer that a model held to the format could not have written
// is recorded as a violation (Violations), and still served, because a
// model cut off by num_predict does write broken JSON and clients must
// cope with it.

// FormatViolation is a scripted answer that broke its request's format.
type FormatViolation struct {
	Answer string
	Reason string
}

// Violations returns the answers that broke their request's format.
func (s *Server) Violations() []FormatViolation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]FormatViolation(nil), s.violations...)
}

func (s *Server) checkFormat(req api.ChatRequest, answer string) {
	if len(bytes.TrimSpace(req.Format)) == 0 {
		return
	}
	if err := conforms(req.Format, answer); err != nil {
		s.mu.Lock()
		s.violations = append(s.violations, FormatViolation{Answer: answer, Reason: err.Error()})
		s.mu.Unlock()
	}
}

// conforms checks answer against format as Ollama reads it: the string
// "json" asks for any JSON value, an object is a JSON schema.
func conforms(format json.RawMessage, answer string) error {
	var inst any
	if err := json.Unmarshal([]byte(answer), &inst); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	var word string
	if json.Unmarshal(format, &word) == nil {
		if word != "json" {
			return fmt.Errorf("unknown format %q", word)
		}
		return nil
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(format, &schema); err != nil {
		return fmt.Errorf("format is not a JSON schema: %w", err)
	}
	rs, err := schema.Resolve(nil)
	if err != nil {
		return fmt.Errorf("format is not a usable JSON schema: %w", err)
	}
	return rs.Validate(inst)
}

// Script answers chat requests from a list, in order, one answer per
// request whatever it asks; past the end it repeats the last. A test that
// knows the order of the model calls it causes scripts them this way.
func Script(answers ...string) ReplyFunc {
	var n int
	var mu = make(chan struct{}, 1)
	return func(api.ChatRequest) (string, error) {
		mu <- struct{}{}
		defer func() { <-mu }()
		if len(answers) == 0 {
			return "ok", nil
		}
		a := answers[min(n, len(answers)-1)]
		n++
		return a, nil
	}
}

// Structured reports whether a request asks for structured output (a
// `format`), i.e. comes from the agent's learning rather than a reply.
func Structured(req api.ChatRequest) bool { return len(bytes.TrimSpace(req.Format)) > 0 }
