package ollamaembed

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeOllama speaks Ollama's /api/embed protocol: POST {"model","input"}
// where input is a string or an array of strings; 200 {"model",
// "embeddings":[[...]]}; errors as {"error":"..."} with Ollama's status
// codes (400 bad input, 404 unknown model, 500 runner failure).
type fakeOllama struct {
	dim    int
	models map[string]bool

	mu       sync.Mutex
	requests int
	batches  [][]string
	// fail, when it returns a status, answers the n-th request (1-based)
	// with that status and message instead of embedding.
	fail func(n int) (status int, msg string)
	// raw, when set, writes the whole answer for the n-th request.
	raw func(n int, w http.ResponseWriter, model string, input []string) bool
	// block makes every request wait until the client gives up.
	block bool

	release chan struct{}
	srv     *httptest.Server
}

func newFakeOllama(t *testing.T, dim int, models ...string) *fakeOllama {
	t.Helper()
	if len(models) == 0 {
		models = []string{DefaultModel}
	}
	f := &fakeOllama{dim: dim, models: map[string]bool{}, release: make(chan struct{})}
	for _, m := range models {
		f.models[m] = true
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	t.Cleanup(func() { close(f.release) }) // runs before srv.Close
	return f
}

func (f *fakeOllama) url() string { return f.srv.URL }

func (f *fakeOllama) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

func (f *fakeOllama) batchSizes() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var n []int
	for _, b := range f.batches {
		n = append(n, len(b))
	}
	return n
}

func ollamaWriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeOllama) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/api/embed" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Model string `json:"model"`
		Input any    `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		ollamaWriteJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	var input []string
	switch in := req.Input.(type) {
	case string:
		if in != "" {
			input = append(input, in)
		}
	case []any:
		for _, v := range in {
			s, ok := v.(string)
			if !ok {
				ollamaWriteJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid input type"})
				return
			}
			input = append(input, s)
		}
	default:
		if req.Input != nil {
			ollamaWriteJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid input type"})
			return
		}
	}

	f.mu.Lock()
	f.requests++
	n := f.requests
	f.batches = append(f.batches, input)
	fail, raw, block := f.fail, f.raw, f.block
	f.mu.Unlock()

	if block {
		select {
		case <-r.Context().Done():
		case <-f.release:
		}
		return
	}
	if fail != nil {
		if status, msg := fail(n); status != 0 {
			ollamaWriteJSON(w, status, map[string]string{"error": msg})
			return
		}
	}
	if !f.models[req.Model] {
		ollamaWriteJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("model '%s' not found", req.Model)})
		return
	}
	if raw != nil && raw(n, w, req.Model, input) {
		return
	}
	embs := make([][]float32, len(input))
	for i, s := range input {
		if s == "" {
			ollamaWriteJSON(w, http.StatusInternalServerError, map[string]string{"error": "empty input"})
			return
		}
		embs[i] = ollamaFakeVec(s, f.dim)
	}
	ollamaWriteJSON(w, http.StatusOK, map[string]any{"model": req.Model, "embeddings": embs})
}

// fakeVec is the deterministic vector of a text.
func ollamaFakeVec(s string, dim int) []float32 {
	h := fnv.New64a()
	h.Write([]byte(s))
	x := h.Sum64()
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32((x>>(uint(i)%60))&0xff) / 255
	}
	return v
}

func ollamaTexts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("text number %d", i)
	}
	return out
}

func ollamaClosedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

func ollamaMustContain(t *testing.T, err error, subs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want an error containing %q, got nil", subs)
	}
	t.Logf("error: %v", err)
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not contain %q", err, s)
		}
	}
}

func ollamaFastOpts(host string) Options {
	return Options{Host: host, Timeout: 5 * time.Second, backoff: 5 * time.Millisecond}
}
