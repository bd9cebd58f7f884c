package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/snowclaw/snowclaw/internal/ollamahost"
)

// Defaults of OllamaOptions.
const (
	DefaultOllamaHost      = "http://127.0.0.1:11434"
	DefaultOllamaModel     = "nomic-embed-text"
	DefaultOllamaBatchSize = 32
	DefaultOllamaTimeout   = 30 * time.Second
	DefaultOllamaRetries   = 2
)

// defaultOllamaBackoff is the wait before the first retry; it doubles on
// each further retry.
const defaultOllamaBackoff = 100 * time.Millisecond

// ollamaProbeText is embedded once by NewOllama to discover the dimension.
const ollamaProbeText = "dimension probe"

// ErrOllamaUnavailable is matched (errors.Is) by errors that mean Ollama
// could not be reached at all: connection refused, DNS failure, no answer
// within the timeout. A caller may fall back to the built-in embedder.
var ErrOllamaUnavailable = errors.New("ollama unavailable")

// OllamaOptions configure an Ollama embedder. Zero values take the defaults.
type OllamaOptions struct {
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
	// text in NewOllama. When set, NewOllama makes no request.
	Dim int
	// HTTPClient is used for requests; nil means a new client with the
	// default transport.
	HTTPClient *http.Client

	// backoff overrides defaultOllamaBackoff (tests).
	backoff time.Duration
}

// Ollama is an Embedder backed by an Ollama server's /api/embed. It is safe
// for concurrent use.
type Ollama struct {
	client    *api.Client
	host      string // normalised base URL, for messages
	model     string
	batchSize int
	timeout   time.Duration
	retries   int
	backoff   time.Duration
	dim       int
}

var _ Embedder = (*Ollama)(nil)

// NewOllama returns an Ollama embedder. With opts.Dim == 0 it embeds a probe
// text to learn the dimension, so it fails (with a message naming the host
// and model) when Ollama is down or the model is not pulled.
func NewOllama(ctx context.Context, opts OllamaOptions) (*Ollama, error) {
	host := strings.TrimSpace(opts.Host)
	if host == "" {
		host = DefaultOllamaHost
	}
	base, err := ollamahost.Parse(host)
	if err != nil {
		return nil, err
	}
	o := &Ollama{
		host:      base.String(),
		model:     strings.TrimSpace(opts.Model),
		batchSize: opts.BatchSize,
		timeout:   opts.Timeout,
		retries:   opts.Retries,
		backoff:   opts.backoff,
		dim:       opts.Dim,
	}
	if o.model == "" {
		o.model = DefaultOllamaModel
	}
	if o.batchSize <= 0 {
		o.batchSize = DefaultOllamaBatchSize
	}
	if o.timeout <= 0 {
		o.timeout = DefaultOllamaTimeout
	}
	switch {
	case o.retries == 0:
		o.retries = DefaultOllamaRetries
	case o.retries < 0:
		o.retries = 0
	}
	if o.backoff <= 0 {
		o.backoff = defaultOllamaBackoff
	}
	if o.dim < 0 {
		return nil, fmt.Errorf("ollama: negative dimension %d", o.dim)
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	o.client = api.NewClient(base, hc)

	if o.dim == 0 {
		vecs, err := o.embedBatch(ctx, []string{ollamaProbeText})
		if err != nil {
			return nil, err
		}
		if len(vecs) != 1 {
			return nil, o.errorf("model %q returned %d vectors for 1 probe text", o.model, len(vecs))
		}
		if len(vecs[0]) == 0 {
			return nil, o.errorf("model %q returned an empty vector; is it an embedding model?", o.model)
		}
		o.dim = len(vecs[0])
	}
	return o, nil
}

// Name returns "ollama:<model>".
func (o *Ollama) Name() string { return "ollama:" + o.model }

// Dim returns the vector dimension.
func (o *Ollama) Dim() int { return o.dim }

// Host returns the base URL of the Ollama server.
func (o *Ollama) Host() string { return o.host }

// Model returns the model name.
func (o *Ollama) Model() string { return o.model }

// Embed returns one vector per text, in order, sending BatchSize texts per
// request. Every vector is checked to have dimension Dim().
func (o *Ollama) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += o.batchSize {
		end := min(start+o.batchSize, len(texts))
		vecs, err := o.embedBatch(ctx, texts[start:end])
		if err != nil {
			return nil, err
		}
		if len(vecs) != end-start {
			return nil, o.errorf("model %q returned %d vectors for %d texts", o.model, len(vecs), end-start)
		}
		for i, v := range vecs {
			if len(v) != o.dim {
				return nil, o.errorf("model %q returned a vector of dimension %d for text %d, want %d (a changed model needs a reindex)",
					o.model, len(v), start+i, o.dim)
			}
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// embedBatch sends one /api/embed request, retrying transient failures.
func (o *Ollama) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	input := make([]string, len(texts))
	for i, t := range texts {
		// Ollama may fail on an input with no tokens; a blank still gets a
		// vector of the right dimension.
		if strings.TrimSpace(t) == "" {
			t = " "
		}
		input[i] = t
	}
	req := &api.EmbedRequest{Model: o.model, Input: input}

	wait := o.backoff
	var lastErr error
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, o.ctxError(err)
		}
		resp, err := o.do(ctx, req)
		if err == nil {
			return resp.Embeddings, nil
		}
		if cerr := ctx.Err(); cerr != nil {
			return nil, o.ctxError(cerr)
		}
		lastErr = err
		if !ollamaTransient(err) || attempt >= o.retries {
			break
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, o.ctxError(ctx.Err())
		case <-t.C:
		}
		wait *= 2
	}
	return nil, o.describe(lastErr, o.retries)
}

// errOllamaAttemptTimeout marks a request that got no answer within the timeout.
var errOllamaAttemptTimeout = errors.New("request timed out")

// do makes one request bounded by the per-request timeout. It never panics:
// a panic in the client is turned into an error.
func (o *Ollama) do(ctx context.Context, req *api.EmbedRequest) (resp *api.EmbedResponse, err error) {
	actx, cancel := context.WithTimeoutCause(ctx, o.timeout, errOllamaAttemptTimeout)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			resp, err = nil, fmt.Errorf("ollama client panic: %v", r)
		}
	}()
	resp, err = o.client.Embed(actx, req)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(actx), errOllamaAttemptTimeout) {
		err = fmt.Errorf("%w: %w", errOllamaAttemptTimeout, err)
	}
	if err == nil && resp == nil {
		err = errors.New("empty response")
	}
	return resp, err
}

// ollamaTransient reports whether a failed request is worth retrying.
func ollamaTransient(err error) bool {
	var se api.StatusError
	if errors.As(err, &se) {
		return se.StatusCode >= 500 || se.StatusCode == http.StatusTooManyRequests
	}
	var ae api.AuthorizationError
	if errors.As(err, &ae) {
		return false
	}
	if errors.Is(err, errOllamaAttemptTimeout) {
		return true
	}
	if ollamahost.Unreachable(err) {
		return true
	}
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	return false
}

// describe turns the last error of a request into a message naming the
// host and model. The result unwraps to err (errors.As finds
// api.StatusError) and, when Ollama could not be reached, to
// ErrOllamaUnavailable.
func (o *Ollama) describe(err error, retries int) error {
	tries := ""
	if retries > 0 && ollamaTransient(err) {
		tries = fmt.Sprintf(" (%d attempts)", retries+1)
	}
	hint := fmt.Sprintf("is `ollama serve` running and the model pulled (`ollama pull %s`)?", o.model)
	wrap := func(unavailable bool, format string, args ...any) error {
		e := &ollamahost.Error{Msg: fmt.Sprintf("ollama at %s: ", o.host) + fmt.Sprintf(format, args...), Errs: []error{err}}
		if unavailable {
			e.Errs = append(e.Errs, ErrOllamaUnavailable)
		}
		return e
	}

	var se api.StatusError
	if errors.As(err, &se) {
		msg := strings.TrimSpace(se.ErrorMessage)
		if msg == "" {
			msg = strings.TrimSpace(se.Status)
		}
		msg = ollamahost.Clip(msg, 300)
		if se.StatusCode == http.StatusNotFound {
			if msg == "" {
				msg = "not found"
			}
			return wrap(false, "model %q: %s (HTTP 404); pull it with `ollama pull %s`, or check the host",
				o.model, msg, o.model)
		}
		return wrap(false, "model %q: HTTP %d: %s%s", o.model, se.StatusCode, msg, tries)
	}
	var ae api.AuthorizationError
	if errors.As(err, &ae) {
		return wrap(false, "model %q: unauthorized (HTTP %d)", o.model, ae.StatusCode)
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return wrap(true, "connection refused; %s%s", hint, tries)
	}
	if ollamahost.Unreachable(err) {
		return wrap(true, "cannot connect: %v; %s%s", err, hint, tries)
	}
	if errors.Is(err, errOllamaAttemptTimeout) {
		return wrap(true, "model %q: no answer within %s; %s%s", o.model, o.timeout, hint, tries)
	}
	var se2 *json.SyntaxError
	var te *json.UnmarshalTypeError
	if errors.As(err, &se2) || errors.As(err, &te) {
		return wrap(false, "model %q: invalid response from /api/embed (is this an Ollama server?): %v", o.model, err)
	}
	return wrap(false, "model %q: %v%s", o.model, err, tries)
}

// ctxError reports the caller's context ending; errors.Is(err,
// context.Canceled / DeadlineExceeded) holds.
func (o *Ollama) ctxError(err error) error {
	return fmt.Errorf("ollama at %s: model %q: %w", o.host, o.model, err)
}

func (o *Ollama) errorf(format string, args ...any) error {
	return fmt.Errorf("ollama at %s: "+format, append([]any{o.host}, args...)...)
}
