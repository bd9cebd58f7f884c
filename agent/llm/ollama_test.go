package llm

import (
	"context"
	"errors"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/snowclaw/snowclaw/agent/llm/llmtest"
)

// fastOpts keeps retries quick so tests of the retry path stay fast.
func fastOpts(host string) OllamaOptions {
	return OllamaOptions{Host: host, Model: "llama3.2", Timeout: 5 * time.Second, backoff: time.Millisecond}
}

func mustOllama(t *testing.T, o OllamaOptions) *Ollama {
	t.Helper()
	c, err := NewOllama(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustContain(t *testing.T, err error, subs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want an error containing %q, got nil", subs)
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not contain %q", err, s)
		}
	}
}

func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

var hello = []Message{{Role: RoleSystem, Content: "You are terse."}, {Role: RoleUser, Content: "hello"}}

func TestNewOllama_Options(t *testing.T) {
	temp := 0.2
	nan := math.NaN()
	neg := -1.0
	tests := []struct {
		name     string
		opts     OllamaOptions
		wantHost string
		wantErr  []string
	}{
		{name: "defaults", opts: OllamaOptions{Model: "llama3.2"}, wantHost: DefaultOllamaHost},
		{name: "host without scheme", opts: OllamaOptions{Host: "gpu-box:11434/", Model: "m"}, wantHost: "http://gpu-box:11434"},
		{name: "https with path", opts: OllamaOptions{Host: "https://x.example/ollama/", Model: "m"}, wantHost: "https://x.example/ollama"},
		{name: "options", opts: OllamaOptions{Model: "m", Temperature: &temp, NumCtx: 8192}, wantHost: DefaultOllamaHost},
		{name: "no model", opts: OllamaOptions{Model: "  "}, wantErr: []string{"no model", "ollama list"}},
		{name: "bad scheme", opts: OllamaOptions{Host: "ftp://x:1", Model: "m"}, wantErr: []string{"invalid host", "ftp://x:1", "http or https"}},
		{name: "no host name", opts: OllamaOptions{Host: "http://", Model: "m"}, wantErr: []string{"invalid host", "no host name"}},
		{name: "NaN temperature", opts: OllamaOptions{Model: "m", Temperature: &nan}, wantErr: []string{"invalid temperature"}},
		{name: "negative temperature", opts: OllamaOptions{Model: "m", Temperature: &neg}, wantErr: []string{"invalid temperature"}},
		{name: "negative num_ctx", opts: OllamaOptions{Model: "m", NumCtx: -1}, wantErr: []string{"invalid num_ctx"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := NewOllama(tc.opts)
			if tc.wantErr != nil {
				mustContain(t, err, tc.wantErr...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Host() != tc.wantHost {
				t.Errorf("Host = %q, want %q", o.Host(), tc.wantHost)
			}
			if o.c.Timeout() != DefaultOllamaTimeout || o.c.Retries() != DefaultOllamaRetries {
				t.Errorf("timeout, retries = %v, %d; want defaults", o.c.Timeout(), o.c.Retries())
			}
			if want := "ollama/" + strings.TrimSpace(tc.opts.Model); o.Name() != want {
				t.Errorf("Name = %q, want %q", o.Name(), want)
			}
		})
	}
}

func TestOllamaChat_Reply(t *testing.T) {
	tests := []struct {
		name    string
		reply   string
		want    string
		wantErr []string
	}{
		{name: "plain", reply: "Hi there.", want: "Hi there."},
		{name: "thinking block dropped", reply: "<think>user greets</think>\n\nHi.", want: "Hi."},
		{name: "empty is an error", reply: "", wantErr: []string{"empty reply", `"llama3.2"`}},
		{name: "blank is an error", reply: " \n ", wantErr: []string{"empty reply"}},
		{name: "unfinished thinking is an error", reply: "<think>hmm, the user", wantErr: []string{"empty reply"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := llmtest.NewServer(t, func(api.ChatRequest) (string, error) { return tc.reply, nil })
			got, err := mustOllama(t, fastOpts(s.URL)).Chat(context.Background(), hello)
			if tc.wantErr != nil {
				mustContain(t, err, tc.wantErr...)
				if !errors.Is(err, ErrEmptyReply) {
					t.Errorf("errors.Is(%v, ErrEmptyReply) = false", err)
				}
				if n := len(s.Requests()); n != 1 {
					t.Errorf("%d requests, want 1 (an empty reply is not retried)", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Chat = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestOllamaChat_Request(t *testing.T) {
	s := llmtest.NewServer(t, nil)
	temp := 0.3
	opts := fastOpts(s.URL)
	opts.Temperature, opts.NumCtx = &temp, 4096
	msgs := append(append([]Message(nil), hello...), Message{Role: RoleAssistant, Content: "Hi."}, Message{Role: RoleUser, Content: "bye"})
	if _, err := mustOllama(t, opts).Chat(context.Background(), msgs); err != nil {
		t.Fatal(err)
	}
	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Model != "llama3.2" || r.Stream == nil || *r.Stream {
		t.Errorf("model %q stream %v; want llama3.2, false", r.Model, r.Stream)
	}
	if len(r.Messages) != len(msgs) {
		t.Fatalf("%d messages, want %d", len(r.Messages), len(msgs))
	}
	for i, m := range msgs {
		if r.Messages[i].Role != m.Role || r.Messages[i].Content != m.Content {
			t.Errorf("message %d = %s %q, want %s %q", i, r.Messages[i].Role, r.Messages[i].Content, m.Role, m.Content)
		}
	}
	if r.Options["temperature"] != 0.3 || r.Options["num_ctx"] != 4096.0 {
		t.Errorf("options = %v", r.Options)
	}
	if got, want := s.LastPrompt(), "You are terse.\nhello\nHi.\nbye"; got != want {
		t.Errorf("LastPrompt = %q, want %q", got, want)
	}
}

func TestOllamaChat_NoMessages(t *testing.T) {
	s := llmtest.NewServer(t, nil)
	_, err := mustOllama(t, fastOpts(s.URL)).Chat(context.Background(), nil)
	mustContain(t, err, "no messages")
	if len(s.Requests()) != 0 {
		t.Error("a request was sent")
	}
}
