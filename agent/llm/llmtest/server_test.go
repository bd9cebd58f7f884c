package llmtest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
)

func client(t *testing.T, s *Server) *api.Client {
	t.Helper()
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	return api.NewClient(u, &http.Client{Timeout: 10 * time.Second})
}

func echo(req api.ChatRequest) (string, error) {
	return "you said: " + req.Messages[len(req.Messages)-1].Content, nil
}

func TestServer_Chat(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name       string
		stream     *bool
		wantChunks int // objects received by the client
	}{
		{name: "stream false is one object", stream: &no, wantChunks: 1},
		{name: "stream true is chunked", stream: &yes, wantChunks: 4},  // "you " "said: " "hi" + done
		{name: "stream absent is chunked", stream: nil, wantChunks: 4}, // Ollama's default
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewServer(t, echo)
			var text strings.Builder
			chunks, dones := 0, 0
			err := client(t, s).Chat(context.Background(), &api.ChatRequest{
				Model:    "llama3.2",
				Messages: []api.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}},
				Stream:   tc.stream,
			}, func(r api.ChatResponse) error {
				chunks++
				text.WriteString(r.Message.Content)
				if r.Done {
					dones++
					if r.DoneReason != "stop" || r.EvalCount == 0 {
						t.Errorf("final chunk lacks done_reason/metrics: %+v", r)
					}
				}
				if r.Message.Role != "assistant" || r.Model != "llama3.2" {
					t.Errorf("chunk role %q model %q", r.Message.Role, r.Model)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := text.String(); got != "you said: hi" {
				t.Errorf("reply %q, want %q", got, "you said: hi")
			}
			if chunks != tc.wantChunks || dones != 1 {
				t.Errorf("got %d chunks (%d done), want %d (1 done)", chunks, dones, tc.wantChunks)
			}
			if got := s.LastPrompt(); got != "be brief\nhi" {
				t.Errorf("LastPrompt = %q", got)
			}
		})
	}
}

func TestServer_StreamIsNDJSON(t *testing.T) {
	s := NewServer(t, func(api.ChatRequest) (string, error) { return "a b", nil })
	resp, err := http.Post(s.URL+"/api/chat", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Errorf("Content-Type %q", ct)
	}
	var lines []map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 3 || lines[2]["done"] != true || lines[0]["done"] != false {
		t.Errorf("lines = %v", lines)
	}
}

func TestServer_Errors(t *testing.T) {
	tests := []struct {
		name       string
		reply      ReplyFunc
		models     []string
		model      string
		wantStatus int
		wantMsg    string
	}{
		{name: "reply error is 500", reply: func(api.ChatRequest) (string, error) { return "", errors.New("runner crashed") },
			model: "m", wantStatus: 500, wantMsg: "runner crashed"},
		{name: "HTTPError keeps its status", reply: func(api.ChatRequest) (string, error) {
			return "", fmt.Errorf("wrapped: %w", &HTTPError{Status: 429, Message: "busy"})
		}, model: "m", wantStatus: 429, wantMsg: "busy"},
		{name: "unknown model is 404", models: []string{"llama3.2"}, model: "qwen3",
			wantStatus: 404, wantMsg: "model 'qwen3' not found"},
		{name: "model without tag means latest", models: []string{"llama3.2"}, model: "llama3.2:latest"},
		{name: "missing model is 400", model: "", wantStatus: 400, wantMsg: "model is required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewServer(t, tc.reply)
			if tc.models != nil {
				s.SetModels(tc.models...)
			}
			no := false
			err := client(t, s).Chat(context.Background(), &api.ChatRequest{
				Model: tc.model, Messages: []api.Message{{Role: "user", Content: "x"}}, Stream: &no,
			}, func(api.ChatResponse) error { return nil })
			if tc.wantStatus == 0 {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			var se api.StatusError
			if !errors.As(err, &se) {
				t.Fatalf("error %v (%T), want api.StatusError", err, err)
			}
			if se.StatusCode != tc.wantStatus || se.ErrorMessage != tc.wantMsg {
				t.Errorf("got %d %q, want %d %q", se.StatusCode, se.ErrorMessage, tc.wantStatus, tc.wantMsg)
			}
		})
	}
}

func TestServer_OtherEndpoints(t *testing.T) {
	s := NewServer(t, nil)
	c := client(t, s)
	ctx := context.Background()
	if err := c.Heartbeat(ctx); err != nil {
		t.Errorf("Heartbeat (HEAD /): %v", err)
	}
	if v, err := c.Version(ctx); err != nil || v != Version {
		t.Errorf("Version = %q, %v", v, err)
	}
	list, err := c.List(ctx)
	if err != nil || len(list.Models) != 0 {
		t.Errorf("List before SetModels = %+v, %v; want empty", list, err)
	}
	s.SetModels("llama3.2", "qwen3:8b")
	list, err = c.List(ctx)
	if err != nil || len(list.Models) != 2 || list.Models[0].Name != "llama3.2:latest" || list.Models[1].Name != "qwen3:8b" {
		t.Errorf("List = %+v, %v", list, err)
	}
	if len(s.Requests()) != 0 {
		t.Errorf("non-chat requests were recorded: %v", s.Requests())
	}
}

func TestServer_WaitRequests(t *testing.T) {
	s := NewServer(t, nil)
	c := client(t, s)
	const n = 8
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			no := false
			_ = c.Chat(context.Background(), &api.ChatRequest{
				Model: "m", Messages: []api.Message{{Role: "user", Content: fmt.Sprint(i)}}, Stream: &no,
			}, func(api.ChatResponse) error { return nil })
		}()
	}
	got, ok := s.WaitRequests(n, 5*time.Second)
	if !ok || len(got) != n {
		t.Fatalf("WaitRequests = %d requests, %v; want %d, true", len(got), ok, n)
	}
	wg.Wait()
	if got, ok := s.WaitRequests(n+1, 20*time.Millisecond); ok || len(got) != n {
		t.Errorf("WaitRequests past the end = %d, %v; want %d, false", len(got), ok, n)
	}
}

func TestServer_ClientGivingUpEndsHandler(t *testing.T) {
	release := make(chan struct{})
	s := NewServer(t, func(api.ChatRequest) (string, error) { <-release; return "late", nil })
	t.Cleanup(func() { close(release) }) // runs before the server's Close
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	no := false
	err := client(t, s).Chat(ctx, &api.ChatRequest{Model: "m", Stream: &no}, func(api.ChatResponse) error { return nil })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Close blocked on an abandoned request")
	}
}
