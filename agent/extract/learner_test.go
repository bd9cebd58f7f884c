package extract

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/snowclaw/snowclaw/agent/llm"
	"github.com/snowclaw/snowclaw/agent/llm/llmtest"
)

func newTestLearner(t *testing.T, reply llmtest.ReplyFunc, perHour int) (*Learner, *llmtest.Server) {
	t.Helper()
	srv := llmtest.NewServer(t, reply)
	m, err := llm.NewOllama(llm.OllamaOptions{Host: srv.URL, Model: "m", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(Options{Model: m, CallsPerHour: perHour, Sanitize: func(s string) string { return strings.ReplaceAll(s, "nsec1secret", "[redacted]") }})
	if err != nil {
		t.Fatal(err)
	}
	return l, srv
}

var batch = []Message{{Sender: "alice", Pubkey: strings.Repeat("a", 64), At: time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC).Unix(), Text: "my key is nsec1secret; dentist next Friday"}}

func TestExtract(t *testing.T) {
	tests := []struct {
		name      string
		answers   []string
		wantErr   error
		wantCalls int
		want      []Candidate
	}{
		{
			name:      "valid answer, date resolved in Go",
			answers:   []string{`{"memories":[{"text":"alice has the dentist next Friday","kind":"event","message":1,"about":"sender","confidence":0.9,"topics":["Health"," health"]}]}`},
			wantCalls: 1,
			want:      []Candidate{{Text: "alice has the dentist on 2026-11-27", Kind: "event", About: strings.Repeat("a", 64), Confidence: 0.9, Topics: []string{"health"}, Date: "2026-11-27"}},
		},
		{
			name:      "model's own date kept when Go finds no phrase",
			answers:   []string{`{"memories":[{"text":"alice sees the dentist","kind":"event","message":1,"about":"conversation","confidence":0.5,"when":"the 27th","date":"2026-11-27"}]}`},
			wantCalls: 1,
			want:      []Candidate{{Text: "alice sees the dentist (2026-11-27)", Kind: "event", Confidence: 0.5, Date: "2026-11-27"}},
		},
		{
			name:      "a message number out of range is dropped",
			answers:   []string{`{"memories":[{"text":"x","kind":"fact","message":7,"about":"sender","confidence":0.5}]}`},
			wantCalls: 1,
		},
		{
			name:      "broken then valid: retried once",
			answers:   []string{`{"memories": [`, `{"memories":[]}`},
			wantCalls: 2,
		},
		{
			name:      "schema broken twice: dropped",
			answers:   []string{`{"memories":[{"text":"x","kind":"gossip","message":1,"about":"sender","confidence":0.5}]}`},
			wantErr:   ErrInvalid,
			wantCalls: 2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, srv := newTestLearner(t, llmtest.Script(tc.answers...), 10)
			got, err := l.Extract(context.Background(), "a group", batch)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			reqs := srv.Requests()
			if len(reqs) != tc.wantCalls || l.Stats().Calls != uint64(tc.wantCalls) {
				t.Fatalf("%d requests, %d counted; want %d", len(reqs), l.Stats().Calls, tc.wantCalls)
			}
			for _, r := range reqs {
				if !llmtest.Structured(r) || !strings.Contains(string(r.Format), `"memories"`) {
					t.Fatalf("request format = %s", r.Format)
				}
				if p := r.Messages[len(r.Messages)-1].Content; strings.Contains(p, "nsec1secret") {
					t.Fatal("the sanitizer did not run before the model")
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("candidates = %+v, want %+v", got, tc.want)
			}
			for i := range got {
				g, w := got[i], tc.want[i]
				if g.Text != w.Text || g.Kind != w.Kind || g.About != w.About || g.Date != w.Date || strings.Join(g.Topics, ",") != strings.Join(w.Topics, ",") {
					t.Errorf("candidate %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestBudget(t *testing.T) {
	l, srv := newTestLearner(t, func(api.ChatRequest) (string, error) { return `{"memories":[]}`, nil }, 2)
	for i := 0; i < 2; i++ {
		if _, err := l.Extract(context.Background(), "a group", batch); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Extract(context.Background(), "a group", batch); !errors.Is(err, ErrBudget) {
		t.Fatalf("third call: %v, want ErrBudget", err)
	}
	if st := l.Stats(); st.Calls != 2 || st.SkippedBudget != 1 || len(srv.Requests()) != 2 || st.PromptTokens == 0 {
		t.Fatalf("stats = %+v, %d requests", st, len(srv.Requests()))
	}
}

func TestDecide(t *testing.T) {
	cands := []Candidate{{Text: "alice lives in Berlin"}, {Text: "bob likes chess"}, {Text: "alice likes tea"}}
	similar := [][]Existing{{{ID: "aaaaaaaaaaaa", Text: "alice lives in Paris"}}, nil, {{ID: "bbbbbbbbbbbb", Text: "alice likes tea"}}}
	l, srv := newTestLearner(t, llmtest.Script(`{"decisions":[{"candidate":1,"action":"UPDATE","target":"aaaaaaaaaaaa"},{"candidate":2,"action":"NOTHING"},{"candidate":3,"action":"UPDATE","target":"not-shown"}]}`), 10)
	got, err := l.Decide(context.Background(), cands, similar)
	if err != nil {
		t.Fatal(err)
	}
	want := []Decision{{ActionUpdate, "aaaaaaaaaaaa"}, {ActionAdd, ""}, {ActionAdd, ""}}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("decision %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if p := srv.LastPrompt(); strings.Contains(p, "bob likes chess") {
		t.Error("a candidate with nothing similar was sent to the model")
	}
	// nothing similar at all: no call
	l2, srv2 := newTestLearner(t, nil, 10)
	if got, err := l2.Decide(context.Background(), cands[:1], nil); err != nil || got[0].Action != ActionAdd || len(srv2.Requests()) != 0 {
		t.Fatalf("Decide without similar = %+v, %v, %d requests", got, err, len(srv2.Requests()))
	}
}
