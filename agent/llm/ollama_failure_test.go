package llm

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/snowclaw/snowclaw/agent/llm/llmtest"
)

func TestOllamaChat_Retries(t *testing.T) {
	tests := []struct {
		name     string
		failures int   // leading requests that fail
		fail     error // how they fail
		models   []string
		retries  int
		wantReqs int
		wantErr  []string
		wantIs   error
	}{
		{name: "500 then success", failures: 2, fail: errors.New("runner crashed"), wantReqs: 3},
		{name: "429 then success", failures: 1, fail: &llmtest.HTTPError{Status: 429, Message: "busy"}, wantReqs: 2},
		{name: "503 exhausted", failures: 10, fail: &llmtest.HTTPError{Status: 503, Message: "overloaded"}, wantReqs: 3,
			wantErr: []string{"HTTP 503", "overloaded", "(3 attempts)", `"llama3.2"`}},
		{name: "retries disabled", failures: 10, fail: errors.New("boom"), retries: -1, wantReqs: 1, wantErr: []string{"HTTP 500", "boom"}},
		{name: "400 not retried", failures: 10, fail: &llmtest.HTTPError{Status: 400, Message: "invalid role"}, wantReqs: 1,
			wantErr: []string{"HTTP 400", "invalid role"}},
		{name: "404 not retried, pull hint", models: []string{"qwen3"}, wantReqs: 1,
			wantErr: []string{"model not found", "run `ollama pull llama3.2`", "model 'llama3.2' not found"}, wantIs: ErrModelNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int32
			s := llmtest.NewServer(t, func(api.ChatRequest) (string, error) {
				if int(n.Add(1)) <= tc.failures {
					return "", tc.fail
				}
				return "finally", nil
			})
			if tc.models != nil {
				s.SetModels(tc.models...)
			}
			opts := fastOpts(s.URL)
			opts.Retries = tc.retries
			got, err := mustOllama(t, opts).Chat(context.Background(), hello)
			if reqs := len(s.Requests()); reqs != tc.wantReqs {
				t.Errorf("%d requests, want %d", reqs, tc.wantReqs)
			}
			if tc.wantErr != nil {
				mustContain(t, err, append(tc.wantErr, s.URL)...)
				if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
					t.Errorf("errors.Is(%v, %v) = false", err, tc.wantIs)
				}
				return
			}
			if err != nil || got != "finally" {
				t.Errorf("Chat = %q, %v; want finally", got, err)
			}
		})
	}
}

func TestOllamaChat_Timeout(t *testing.T) {
	release := make(chan struct{})
	s := llmtest.NewServer(t, func(api.ChatRequest) (string, error) { <-release; return "late", nil })
	t.Cleanup(func() { close(release) })
	opts := fastOpts(s.URL)
	opts.Timeout = 100 * time.Millisecond
	start := time.Now()
	_, err := mustOllama(t, opts).Chat(context.Background(), hello)
	mustContain(t, err, "no reply within 100ms", `"llama3.2"`, s.URL, "raise the timeout")
	if !errors.Is(err, ErrTimeout) {
		t.Errorf("errors.Is(%v, ErrTimeout) = false", err)
	}
	if errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, ErrTimeout) {
		t.Error("a per-attempt timeout looks like the caller's deadline")
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d requests, want 1 (timeouts are not retried)", n)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestOllamaChat_ConnectionRefused(t *testing.T) {
	host := closedAddr(t)
	_, err := mustOllama(t, fastOpts(host)).Chat(context.Background(), hello)
	mustContain(t, err, host, `"llama3.2"`, "connection refused", "(3 attempts)", "ollama serve")
	if !errors.Is(err, ErrOllamaUnavailable) {
		t.Errorf("errors.Is(%v, ErrOllamaUnavailable) = false", err)
	}
}

func TestOllamaChat_CancelStopsRetries(t *testing.T) {
	s := llmtest.NewServer(t, func(api.ChatRequest) (string, error) { return "", errors.New("down") })
	opts := fastOpts(s.URL)
	opts.backoff = time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := mustOllama(t, opts).Chat(ctx, hello)
		errc <- err
	}()
	if _, ok := s.WaitRequests(1, 5*time.Second); !ok {
		t.Fatal("no request arrived")
	}
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		mustContain(t, err, s.URL, `"llama3.2"`)
	case <-time.After(5 * time.Second):
		t.Fatal("Chat kept waiting after cancel")
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// A proxy in front of Ollama answers with its own pages; the api client
// alone would turn an empty 502 into a silent success.
func TestOllamaChat_NonOllamaAnswers(t *testing.T) {
	tests := []struct {
		name     string
		handler  http.HandlerFunc
		wantReqs int
		wantErr  []string
	}{
		{name: "empty 502 retried", handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) },
			wantReqs: 3, wantErr: []string{"HTTP 502", "(3 attempts)"}},
		{name: "html 404", handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte("<html>nope</html>"))
		}, wantReqs: 1, wantErr: []string{"model not found", "check that the host is an Ollama server"}},
		{name: "body cut before done retried", handler: func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"model":"llama3.2","message":{"role":"assistant","content":"par"},"done":false}` + "\n"))
		}, wantReqs: 3, wantErr: []string{"before the reply was complete", "(3 attempts)"}},
		{name: "not json", handler: func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("hello from nginx")) },
			wantReqs: 1, wantErr: []string{"invalid response", "Ollama server"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n.Add(1)
				tc.handler(w, r)
			}))
			t.Cleanup(srv.Close)
			_, err := mustOllama(t, fastOpts(srv.URL)).Chat(context.Background(), hello)
			mustContain(t, err, append(tc.wantErr, srv.URL)...)
			if got := int(n.Load()); got != tc.wantReqs {
				t.Errorf("%d requests, want %d", got, tc.wantReqs)
			}
		})
	}
}

func TestOllamaChat_StreamingServerJoined(t *testing.T) {
	// A server that streams although asked not to must not lose words.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, p := range []string{`"one "`, `"two"`} {
			_, _ = w.Write([]byte(`{"model":"m","message":{"role":"assistant","content":` + p + `},"done":false}` + "\n"))
		}
		_, _ = w.Write([]byte(`{"model":"m","message":{"role":"assistant","content":""},"done":true}` + "\n"))
	}))
	t.Cleanup(srv.Close)
	got, err := mustOllama(t, fastOpts(srv.URL)).Chat(context.Background(), hello)
	if err != nil || got != "one two" {
		t.Errorf("Chat = %q, %v; want %q", got, err, "one two")
	}
}
