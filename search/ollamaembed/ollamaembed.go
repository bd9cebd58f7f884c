// Package ollamaembed is the search index's Ollama embedder
// (search.Embedder): texts are embedded by an Ollama server's /api/embed,
// through internal/ollama, in batches with retries.
package ollamaembed

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/snowclaw/snowclaw/internal/ollama"
	"github.com/snowclaw/snowclaw/search"
)

// Defaults of Options.
const (
	DefaultHost      = ollama.DefaultHost
	DefaultModel     = "nomic-embed-text"
	DefaultBatchSize = 32
	DefaultTimeout   = 30 * time.Second
	DefaultRetries   = ollama.DefaultRetries
)

// defaultBackoff is the wait before the first retry; it doubles on
// each further retry.
const defaultBackoff = 100 * time.Millisecond

// probeText is embedded once by New to discover the dimension.
const probeText = "dimension probe"

// ErrUnavailable is matched (errors.Is) by errors that mean Ollama
// could not be reached at all: connection refused, DNS failure, no answer
// within the timeout. A caller may fall back to the built-in embedder.
var ErrUnavailable = ollama.ErrUnavailable

// Options configure an Ollama embedder. Zero values take the defaults.
type Options struct {
	// Host is the Ollama server, "http://host:port" or "host:port"
	// (default "http://127.0.0.1:11434").
	Host string
	// Model is the embedding model (default "nomic-embed-text").
	Model string
	// BatchSize is the number of texts sent per /api/embed request
	// (default 32).
	BatchSize int
	// Timeout bounds each request (default 30s).
	Timeout time.Duration
	// Retries is the number of retries of a transient failure (connection
	// refused or reset, HTTP 5xx or 429, timeout), with a short doubling
	// backoff. 0 means the default (2); a negative value disables retries.
	Retries int
	// Dim is the vector dimension; 0 discovers it by embedding a probe
	// text in New. When set, New makes no request.
	Dim int
	// HTTPClient is used for requests; nil means a new client with the
	// default transport.
	HTTPClient *http.Client

	// backoff overrides defaultBackoff (tests).
	backoff time.Duration
}

// Embedder is a search.Embedder backed by an Ollama server's /api/embed
// (through internal/ollama). It is safe for concurrent use.
type Embedder struct {
	c         *ollama.Client
	batchSize int
	dim       int
}

var _ search.Embedder = (*Embedder)(nil)

// New returns an Ollama embedder. With opts.Dim == 0 it embeds a probe
// text to learn the dimension, so it fails (with a message naming the host
// and model) when Ollama is down or the model is not pulled.
func New(ctx context.Context, opts Options) (*Embedder, error) {
	model := strings.TrimSpace(opts.Model)
	if model == "" {
		model = DefaultModel
	}
	timeout, backoff := opts.Timeout, opts.backoff
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if backoff <= 0 {
		backoff = defaultBackoff
	}
	c, err := ollama.New(ollama.Options{Host: opts.Host, Model: model, Timeout: timeout, Retries: opts.Retries, Backoff: backoff, HTTPClient: opts.HTTPClient})
	if err != nil {
		return nil, err
	}
	o := &Embedder{c: c, batchSize: opts.BatchSize, dim: opts.Dim}
	if o.batchSize <= 0 {
		o.batchSize = DefaultBatchSize
	}
	if o.dim < 0 {
		return nil, fmt.Errorf("ollama: negative dimension %d", o.dim)
	}
	if o.dim == 0 {
		vecs, err := c.Embed(ctx, []string{probeText})
		if err != nil {
			return nil, err
		}
		if len(vecs) != 1 {
			return nil, c.Errorf("model %q returned %d vectors for 1 probe text", model, len(vecs))
		}
		if len(vecs[0]) == 0 {
			return nil, c.Errorf("model %q returned an empty vector; is it an embedding model?", model)
		}
		o.dim = len(vecs[0])
	}
	return o, nil
}

// Name returns "ollama:<model>".
func (o *Embedder) Name() string { return "ollama:" + o.c.Model() }

// Dim returns the vector dimension.
func (o *Embedder) Dim() int { return o.dim }

// Host returns the base URL of the Ollama server.
func (o *Embedder) Host() string { return o.c.Host() }

// Model returns the model name.
func (o *Embedder) Model() string { return o.c.Model() }

// Embed returns one vector per text, in order, sending BatchSize texts per
// request. Every vector is checked to have dimension Dim().
func (o *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += o.batchSize {
		end := min(start+o.batchSize, len(texts))
		vecs, err := o.c.Embed(ctx, texts[start:end])
		if err != nil {
			return nil, err
		}
		if len(vecs) != end-start {
			return nil, o.c.Errorf("model %q returned %d vectors for %d texts", o.Model(), len(vecs), end-start)
		}
		for i, v := range vecs {
			if len(v) != o.dim {
				return nil, o.c.Errorf("model %q returned a vector of dimension %d for text %d, want %d (a changed model needs a reindex)",
					o.Model(), len(v), start+i, o.dim)
			}
		}
		out = append(out, vecs...)
	}
	return out, nil
}
