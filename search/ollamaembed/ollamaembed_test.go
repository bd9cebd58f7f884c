package ollamaembed

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/snowclaw/snowclaw/search"
)

func TestOllama_Construct(t *testing.T) {
	f := newFakeOllama(t, 12, DefaultModel, "mxbai-embed-large")
	tests := []struct {
		name     string
		opts     Options
		wantName string
		wantDim  int
		wantReqs int // requests made by New
		wantErr  []string
	}{
		{name: "defaults discover dim", opts: ollamaFastOpts(f.url()), wantName: "ollama:nomic-embed-text", wantDim: 12, wantReqs: 1},
		{name: "other model", opts: Options{Host: f.url(), Model: "mxbai-embed-large"}, wantName: "ollama:mxbai-embed-large", wantDim: 12, wantReqs: 1},
		{name: "host without scheme", opts: Options{Host: strings.TrimPrefix(f.url(), "http://") + "/"}, wantName: "ollama:nomic-embed-text", wantDim: 12, wantReqs: 1},
		{name: "dim given, no probe", opts: Options{Host: f.url(), Dim: 768}, wantName: "ollama:nomic-embed-text", wantDim: 768, wantReqs: 0},
		{name: "dim given, server down is fine", opts: Options{Host: ollamaClosedAddr(t), Dim: 384}, wantName: "ollama:nomic-embed-text", wantDim: 384, wantReqs: 0},
		{name: "bad scheme", opts: Options{Host: "ftp://x:1", Dim: 4}, wantErr: []string{"invalid host", "ftp://x:1"}},
		{name: "no host", opts: Options{Host: "http://", Dim: 4}, wantErr: []string{"invalid host"}},
		{name: "negative dim", opts: Options{Host: f.url(), Dim: -1}, wantErr: []string{"negative dimension"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := f.count()
			o, err := New(context.Background(), tc.opts)
			if tc.wantErr != nil {
				ollamaMustContain(t, err, tc.wantErr...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Name() != tc.wantName || o.Dim() != tc.wantDim {
				t.Errorf("Name, Dim = %q, %d; want %q, %d", o.Name(), o.Dim(), tc.wantName, tc.wantDim)
			}
			if got := f.count() - before; got != tc.wantReqs {
				t.Errorf("New made %d requests, want %d", got, tc.wantReqs)
			}
		})
	}

	t.Run("default host", func(t *testing.T) {
		o, err := New(context.Background(), Options{Dim: 8})
		if err != nil {
			t.Fatal(err)
		}
		if o.Host() != DefaultHost || o.Model() != DefaultModel {
			t.Errorf("Host, Model = %q, %q", o.Host(), o.Model())
		}
		var _ search.Embedder = o
	})
}

func TestOllama_Batching(t *testing.T) {
	tests := []struct {
		name      string
		n         int
		batchSize int
		wantSizes []int
	}{
		{name: "70 by 32", n: 70, batchSize: 32, wantSizes: []int{32, 32, 6}},
		{name: "70 default batch", n: 70, batchSize: 0, wantSizes: []int{32, 32, 6}},
		{name: "64 by 32", n: 64, batchSize: 32, wantSizes: []int{32, 32}},
		{name: "one", n: 1, batchSize: 32, wantSizes: []int{1}},
		{name: "five by 2", n: 5, batchSize: 2, wantSizes: []int{2, 2, 1}},
		{name: "none", n: 0, batchSize: 32, wantSizes: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeOllama(t, 16)
			opts := ollamaFastOpts(f.url())
			opts.BatchSize = tc.batchSize
			opts.Dim = 16
			o, err := New(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			in := ollamaTexts(tc.n)
			vecs, err := o.Embed(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if len(vecs) != tc.n {
				t.Fatalf("got %d vectors, want %d", len(vecs), tc.n)
			}
			for i, v := range vecs {
				want := ollamaFakeVec(in[i], 16)
				if fmt.Sprint(v) != fmt.Sprint(want) {
					t.Fatalf("vector %d out of order: got %v want %v", i, v, want)
				}
			}
			if got := f.batchSizes(); fmt.Sprint(got) != fmt.Sprint(tc.wantSizes) {
				t.Errorf("batch sizes %v, want %v", got, tc.wantSizes)
			}
			if f.count() != len(tc.wantSizes) {
				t.Errorf("%d requests, want %d", f.count(), len(tc.wantSizes))
			}
		})
	}
}

func TestOllama_BlankText(t *testing.T) {
	f := newFakeOllama(t, 4)
	opts := ollamaFastOpts(f.url())
	opts.Dim = 4
	o, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	vecs, err := o.Embed(context.Background(), []string{"a", "", "  "})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 3 || len(vecs[1]) != 4 {
		t.Fatalf("got %v", vecs)
	}
}

func TestOllama_Retry(t *testing.T) {
	tests := []struct {
		name     string
		retries  int
		fail     func(n int) (int, string)
		wantReqs int
		wantErr  []string
	}{
		{
			name: "500 then success",
			fail: func(n int) (int, string) {
				return map[bool]int{true: 500}[n == 1], "llama runner process has terminated"
			},
			wantReqs: 2,
		},
		{
			name: "503 twice then success",
			fail: func(n int) (int, string) {
				return map[bool]int{true: 503}[n <= 2], "server busy, please try again.  maximum pending requests exceeded"
			},
			wantReqs: 3,
		},
		{
			name:     "429 then success",
			fail:     func(n int) (int, string) { return map[bool]int{true: 429}[n == 1], "too many requests" },
			wantReqs: 2,
		},
		{
			name:     "500 always gives up",
			fail:     func(n int) (int, string) { return 500, "llama runner process has terminated: exit status 2" },
			wantReqs: 3,
			wantErr:  []string{"HTTP 500", "llama runner process has terminated", "(3 attempts)", "nomic-embed-text"},
		},
		{
			name:     "retries disabled",
			retries:  -1,
			fail:     func(n int) (int, string) { return map[bool]int{true: 500}[n == 1], "boom" },
			wantReqs: 1,
			wantErr:  []string{"HTTP 500", "boom"},
		},
		{
			name:     "400 is not retried",
			fail:     func(n int) (int, string) { return 400, "input exceeds maximum context length" },
			wantReqs: 1,
			wantErr:  []string{"HTTP 400", "input exceeds maximum context length"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeOllama(t, 8)
			f.fail = tc.fail
			opts := ollamaFastOpts(f.url())
			opts.Dim = 8
			opts.Retries = tc.retries
			o, err := New(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			vecs, err := o.Embed(context.Background(), ollamaTexts(3))
			if tc.wantErr != nil {
				ollamaMustContain(t, err, tc.wantErr...)
				ollamaMustContain(t, err, f.url())
			} else if err != nil || len(vecs) != 3 {
				t.Fatalf("Embed = %d vectors, %v", len(vecs), err)
			}
			if f.count() != tc.wantReqs {
				t.Errorf("%d requests, want %d", f.count(), tc.wantReqs)
			}
		})
	}
}

func TestOllama_Down(t *testing.T) {
	host := ollamaClosedAddr(t)
	tests := []struct {
		name  string
		model string
		dim   int // 0: the error comes from New's probe
	}{
		{name: "probe at construction", dim: 0},
		{name: "embed", dim: 8},
		{name: "other model named in hint", model: "all-minilm", dim: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			opts := Options{Host: host, Model: tc.model, Dim: tc.dim} // default retries and backoff
			o, err := New(context.Background(), opts)
			if tc.dim != 0 {
				if err != nil {
					t.Fatal(err)
				}
				_, err = o.Embed(context.Background(), []string{"hello"})
			}
			model := tc.model
			if model == "" {
				model = DefaultModel
			}
			ollamaMustContain(t, err,
				"ollama at "+host+": connection refused",
				"is `ollama serve` running and the model pulled (`ollama pull "+model+"`)?")
			if !errors.Is(err, ErrUnavailable) {
				t.Errorf("errors.Is(err, ErrUnavailable) = false for %v", err)
			}
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("errors.Is(err, ECONNREFUSED) = false for %v", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v, want a quick failure", d)
			}
		})
	}
}

func TestOllama_ModelNotFound(t *testing.T) {
	tests := []struct {
		name    string
		fail    func(int) (int, string)
		wantErr []string
	}{
		{
			name:    "unknown name",
			wantErr: []string{"model 'nope' not found", "HTTP 404", "ollama pull nope"},
		},
		{
			name:    "files missing",
			fail:    func(int) (int, string) { return 404, `model "nope" not found, try pulling it first` },
			wantErr: []string{`model "nope" not found, try pulling it first`, "ollama pull nope"},
		},
		{
			name:    "not an embedding model",
			fail:    func(int) (int, string) { return 400, `"llama3" does not support embeddings` },
			wantErr: []string{"HTTP 400", "does not support embeddings"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeOllama(t, 8)
			f.fail = tc.fail
			opts := ollamaFastOpts(f.url())
			opts.Model = "nope"
			_, err := New(context.Background(), opts)
			ollamaMustContain(t, err, tc.wantErr...)
			ollamaMustContain(t, err, "ollama at "+f.url())
			if errors.Is(err, ErrUnavailable) {
				t.Errorf("a reachable server is reported unavailable: %v", err)
			}
			var se api.StatusError
			if !errors.As(err, &se) || se.StatusCode/100 != 4 {
				t.Errorf("errors.As(err, api.StatusError) = %v, %+v", errors.As(err, &se), se)
			}
			if f.count() != 1 {
				t.Errorf("%d requests, want 1 (4xx is not retried)", f.count())
			}
		})
	}
}

func TestOllama_BadResponse(t *testing.T) {
	tests := []struct {
		name    string
		dim     int // 0: discover
		raw     func(n int, w http.ResponseWriter, model string, input []string) bool
		wantErr []string
	}{
		{
			name: "wrong dimension after discovery",
			raw: func(n int, w http.ResponseWriter, model string, input []string) bool {
				if n == 1 {
					return false // probe: dim 8
				}
				embs := make([][]float32, len(input))
				for i, s := range input {
					embs[i] = ollamaFakeVec(s, 8)
				}
				embs[1] = embs[1][:5]
				ollamaWriteJSON(w, 200, map[string]any{"model": model, "embeddings": embs})
				return true
			},
			wantErr: []string{"dimension 5 for text 1, want 8"},
		},
		{
			name:    "configured dim differs",
			dim:     768,
			wantErr: []string{"dimension 8 for text 0, want 768"},
		},
		{
			name: "too few vectors",
			dim:  8,
			raw: func(n int, w http.ResponseWriter, model string, input []string) bool {
				ollamaWriteJSON(w, 200, map[string]any{"model": model, "embeddings": [][]float32{ollamaFakeVec("x", 8)}})
				return true
			},
			wantErr: []string{"returned 1 vectors for 3 texts"},
		},
		{
			name: "empty probe vector",
			raw: func(n int, w http.ResponseWriter, model string, input []string) bool {
				ollamaWriteJSON(w, 200, map[string]any{"model": model, "embeddings": [][]float32{{}}})
				return true
			},
			wantErr: []string{"empty vector"},
		},
		{
			name: "not json",
			dim:  8,
			raw: func(n int, w http.ResponseWriter, model string, input []string) bool {
				w.WriteHeader(200)
				w.Write([]byte("<html>proxy</html>"))
				return true
			},
			wantErr: []string{"ollama at", "invalid response", "invalid character"},
		},
		{
			name: "null embeddings",
			dim:  8,
			raw: func(n int, w http.ResponseWriter, model string, input []string) bool {
				w.WriteHeader(200)
				w.Write([]byte(`{"model":"m","embeddings":null}`))
				return true
			},
			wantErr: []string{"returned 0 vectors for 3 texts"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeOllama(t, 8)
			f.raw = tc.raw
			opts := ollamaFastOpts(f.url())
			opts.Dim = tc.dim
			o, err := New(context.Background(), opts)
			if err == nil {
				_, err = o.Embed(context.Background(), ollamaTexts(3))
			}
			ollamaMustContain(t, err, tc.wantErr...)
			ollamaMustContain(t, err, f.url())
		})
	}
}

func TestOllama_Timeout(t *testing.T) {
	f := newFakeOllama(t, 8)
	f.block = true
	opts := ollamaFastOpts(f.url())
	opts.Dim = 8
	opts.Timeout = 50 * time.Millisecond
	opts.Retries = 1
	o, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = o.Embed(context.Background(), ollamaTexts(2))
	ollamaMustContain(t, err, "no reply within 50ms", "(2 attempts)", "ollama serve")
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("timeout not ErrUnavailable: %v", err)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		t.Errorf("per-request timeout reported as the caller's context: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
	if f.count() != 2 {
		t.Errorf("%d requests, want 2", f.count())
	}
}

func TestOllama_Cancel(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(f *fakeOllama, opts *Options)
		ctx     func() (context.Context, context.CancelFunc)
		want    error
		maxReqs int
	}{
		{
			name: "already cancelled",
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx, cancel
			},
			want:    context.Canceled,
			maxReqs: 0,
		},
		{
			name:  "cancelled during request",
			setup: func(f *fakeOllama, _ *Options) { f.block = true },
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(50*time.Millisecond, cancel)
				return ctx, cancel
			},
			want:    context.Canceled,
			maxReqs: 1,
		},
		{
			name: "cancelled during backoff",
			setup: func(f *fakeOllama, opts *Options) {
				f.fail = func(int) (int, string) { return 500, "boom" }
				opts.backoff = time.Hour
			},
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(50*time.Millisecond, cancel)
				return ctx, cancel
			},
			want:    context.Canceled,
			maxReqs: 1,
		},
		{
			name:  "caller deadline",
			setup: func(f *fakeOllama, _ *Options) { f.block = true },
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 50*time.Millisecond)
			},
			want:    context.DeadlineExceeded,
			maxReqs: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeOllama(t, 8)
			opts := ollamaFastOpts(f.url())
			opts.Dim = 8
			opts.BatchSize = 2
			if tc.setup != nil {
				tc.setup(f, &opts)
			}
			o, err := New(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := tc.ctx()
			defer cancel()
			start := time.Now()
			_, err = o.Embed(ctx, ollamaTexts(6))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want errors.Is %v", err, tc.want)
			}
			ollamaMustContain(t, err, f.url(), "nomic-embed-text")
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v after cancellation", d)
			}
			if f.count() > tc.maxReqs {
				t.Errorf("%d requests, want at most %d", f.count(), tc.maxReqs)
			}
		})
	}

	t.Run("probe cancelled", func(t *testing.T) {
		f := newFakeOllama(t, 8)
		f.block = true
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := New(ctx, ollamaFastOpts(f.url()))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestOllama_Concurrent(t *testing.T) {
	f := newFakeOllama(t, 8)
	o, err := New(context.Background(), ollamaFastOpts(f.url()))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			in := []string{fmt.Sprintf("g%d a", g), fmt.Sprintf("g%d b", g)}
			vecs, err := o.Embed(context.Background(), in)
			if err != nil {
				errs <- err
				return
			}
			for i := range in {
				if fmt.Sprint(vecs[i]) != fmt.Sprint(ollamaFakeVec(in[i], 8)) {
					errs <- fmt.Errorf("goroutine %d: vector %d mismatched", g, i)
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
