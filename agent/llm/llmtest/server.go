// Package llmtest runs a fake Ollama server for tests: a real HTTP server
// speaking Ollama's chat protocol, so that code under test goes through
// the same client, JSON and error paths as against a real Ollama, with no
// model and no network.
package llmtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
)

// Version is what GET /api/version reports.
const Version = "0.12.6"

// ReplyFunc writes the assistant's reply to one chat request. It may be
// called concurrently. An error is answered with HTTP 500 {"error": …},
// or with e.Status when it is an *HTTPError.
type ReplyFunc func(req api.ChatRequest) (string, error)

// HTTPError makes a ReplyFunc answer with a chosen status, e.g. 429 or 503.
type HTTPError struct {
	Status  int
	Message string
}

func (e *HTTPError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message) }

// Server is a fake Ollama. Its URL is the base to give a client, as
// OLLAMA_HOST would be.
type Server struct {
	URL string

	reply ReplyFunc
	srv   *httptest.Server

	mu       sync.Mutex
	requests []api.ChatRequest
	changed  chan struct{} // closed and replaced on each request
	models   []string      // nil: every model exists

	violations []FormatViolation
}

// NewServer starts a fake Ollama answering chat requests with reply and
// closes it when the test ends. A nil reply answers "ok".
func NewServer(t testing.TB, reply func(req api.ChatRequest) (string, error)) *Server {
	t.Helper()
	if reply == nil {
		reply = func(api.ChatRequest) (string, error) { return "ok", nil }
	}
	s := &Server{reply: reply, changed: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// SetModels makes the server know only these models, as if they had been
// pulled: /api/tags lists them and a chat naming another model gets
// Ollama's 404 "model '…' not found" without calling reply. A name without
// a tag means ":latest". Until SetModels is called every model exists.
func (s *Server) SetModels(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = make([]string, len(names))
	for i, n := range names {
		s.models[i] = fullModelName(n)
	}
}

// Close shuts the server down early, e.g. to test a client against a
// server that went away. Closing twice is harmless.
func (s *Server) Close() { s.srv.Close() }

// Requests returns every chat request received, in order of arrival.
func (s *Server) Requests() []api.ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]api.ChatRequest(nil), s.requests...)
}

// WaitRequests waits until at least n chat requests have arrived and
// returns them all; on timeout it returns those received and false.
func (s *Server) WaitRequests(n int, timeout time.Duration) ([]api.ChatRequest, bool) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		got, changed := append([]api.ChatRequest(nil), s.requests...), s.changed
		s.mu.Unlock()
		if len(got) >= n {
			return got, true
		}
		select {
		case <-changed:
		case <-deadline.C:
			return s.Requests(), false
		}
	}
}

// LastPrompt returns the contents of every message of the last chat
// request joined with "\n", or "" before any request: enough for a test to
// check that some text reached the model.
func (s *Server) LastPrompt() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return ""
	}
	msgs := s.requests[len(s.requests)-1].Messages
	parts := make([]string, len(msgs))
	for i, m := range msgs {
		parts[i] = m.Content
	}
	return strings.Join(parts, "\n")
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/" && (r.Method == http.MethodHead || r.Method == http.MethodGet):
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if r.Method == http.MethodGet {
			_, _ = w.Write([]byte("Ollama is running"))
		}
	case r.URL.Path == "/api/version" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]string{"version": Version})
	case r.URL.Path == "/api/tags" && r.Method == http.MethodGet:
		s.serveTags(w)
	case r.URL.Path == "/api/chat" && r.Method == http.MethodPost:
		s.serveChat(w, r)
	default:
		// Ollama's router answers unknown routes with a plain 404.
		http.Error(w, "404 page not found", http.StatusNotFound)
	}
}

func (s *Server) serveTags(w http.ResponseWriter) {
	s.mu.Lock()
	names := append([]string(nil), s.models...)
	s.mu.Unlock()
	list := api.ListResponse{Models: make([]api.ListModelResponse, 0, len(names))}
	for _, n := range names {
		list.Models = append(list.Models, api.ListModelResponse{
			Name: n, Model: n, ModifiedAt: time.Now().UTC(), Size: 1 << 30,
			Digest:  fmt.Sprintf("%064x", len(n)),
			Details: api.ModelDetails{Format: "gguf", Family: "llama", Families: []string{"llama"}, ParameterSize: "1B", QuantizationLevel: "Q4_K_M"},
		})
	}
	writeJSON(w, http.StatusOK, list)
}

// fullModelName adds Ollama's default tag.
func fullModelName(n string) string {
	if !strings.Contains(n, ":") {
		return n + ":latest"
	}
	return n
}

func (s *Server) serveChat(w http.ResponseWriter, r *http.Request) {
	var req api.ChatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if req.Model == "" {
		writeError(w, http.StatusBadRequest, "model is required")
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	close(s.changed)
	s.changed = make(chan struct{})
	known := s.models == nil
	for _, m := range s.models {
		known = known || m == fullModelName(req.Model)
	}
	s.mu.Unlock()
	if !known {
		writeError(w, http.StatusNotFound, fmt.Sprintf("model '%s' not found", req.Model))
		return
	}

	// reply runs aside so that a client giving up (timeout, cancel) ends
	// the handler at once; otherwise a blocked reply would hold the
	// server's Close until the test's own cleanup unblocks it.
	type result struct {
		text string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		text, err := s.reply(req)
		done <- result{text, err}
	}()
	var res result
	select {
	case res = <-done:
	case <-r.Context().Done():
		return
	}
	if res.err != nil {
		var he *HTTPError
		if errors.As(res.err, &he) {
			writeError(w, he.Status, he.Message)
			return
		}
		writeError(w, http.StatusInternalServerError, res.err.Error())
		return
	}
	s.checkFormat(req, res.text)
	u := usageOf(req, res.text)
	if req.Stream != nil && !*req.Stream {
		writeJSON(w, http.StatusOK, chatResponse(req.Model, res.text, true, u))
		return
	}
	writeStream(w, req.Model, res.text, u)
}
