package llm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/snowclaw/snowclaw/internal/ollama"
)

// Defaults of OllamaOptions.
const (
	DefaultOllamaHost    = ollama.DefaultHost
	DefaultOllamaTimeout = ollama.DefaultTimeout
	DefaultOllamaRetries = ollama.DefaultRetries
)

// Errors that Chat's errors match with errors.Is, so the agent can tell a
// server that is down (wait and retry later) from a configuration mistake
// (tell the operator) without parsing messages.
var (
	// ErrOllamaUnavailable: Ollama could not be reached at all
	// (connection refused, unknown host).
	ErrOllamaUnavailable = ollama.ErrUnavailable
	// ErrModelNotFound: the server answered 404, the model is not pulled.
	ErrModelNotFound = ollama.ErrModelNotFound
	// ErrTimeout: an attempt got no complete reply within the timeout.
	ErrTimeout = ollama.ErrTimeout
	// ErrEmptyReply: the model answered with no text.
	ErrEmptyReply = ollama.ErrEmptyReply
)

// OllamaOptions configure an Ollama chat model. Zero values take the
// defaults, except Model, which is required.
type OllamaOptions struct {
	// Host is the Ollama server, "http://host:port" or "host:port"
	// (default "http://127.0.0.1:11434").
	Host string
	// Model is the chat model, e.g. "llama3.2" (required).
	Model string
	// Timeout bounds each attempt (default 120s): a cold model can take
	// that long to load before it writes a word.
	Timeout time.Duration
	// Retries is the number of retries after a connection failure or an
	// HTTP 5xx or 429, with a short doubling backoff. 0 means the default
	// (2); a negative value disables retries. A timeout is not retried: a
	// model too slow once is likely too slow again.
	Retries int
	// Temperature is the sampling temperature; nil leaves the model's own.
	Temperature *float64
	// NumCtx is the context window in tokens; 0 leaves the model's own.
	NumCtx int
	// HTTPClient is used for requests; nil means a new client with the
	// default transport.
	HTTPClient *http.Client

	// backoff overrides ollama.DefaultBackoff (tests).
	backoff time.Duration
}

// Ollama is a Chatter backed by an Ollama server's /api/chat (through
// internal/ollama). It is safe for concurrent use.
type Ollama struct {
	c       *ollama.Client
	options map[string]any
}

// NewOllama checks the options and returns a chat client. It makes no
// request, so a server that is down is reported by the first Chat, not
// here: the agent must start even when the model is not reachable yet.
func NewOllama(opts OllamaOptions) (*Ollama, error) {
	model := strings.TrimSpace(opts.Model)
	if model == "" {
		return nil, errors.New("ollama: no model given; set one that `ollama list` shows, e.g. llama3.2")
	}
	o := &Ollama{}
	if t := opts.Temperature; t != nil {
		if math.IsNaN(*t) || math.IsInf(*t, 0) || *t < 0 {
			return nil, fmt.Errorf("ollama: model %q: invalid temperature %v: must be a number >= 0", model, *t)
		}
		o.options = map[string]any{"temperature": *t}
	}
	if opts.NumCtx < 0 {
		return nil, fmt.Errorf("ollama: model %q: invalid num_ctx %d: must be >= 0", model, opts.NumCtx)
	}
	if opts.NumCtx > 0 {
		if o.options == nil {
			o.options = map[string]any{}
		}
		o.options["num_ctx"] = opts.NumCtx
	}
	c, err := ollama.New(ollama.Options{Host: opts.Host, Model: model, Timeout: opts.Timeout, Retries: opts.Retries, Backoff: opts.backoff, HTTPClient: opts.HTTPClient})
	if err != nil {
		return nil, err
	}
	o.c = c
	return o, nil
}

// Name returns "ollama/<model>".
func (o *Ollama) Name() string { return "ollama/" + o.c.Model() }

// Host returns the base URL of the Ollama server.
func (o *Ollama) Host() string { return o.c.Host() }

// Model returns the model name.
func (o *Ollama) Model() string { return o.c.Model() }

// Chat sends msgs to /api/chat without streaming and returns the reply,
// retrying connection failures and HTTP 5xx/429. Errors name the host and
// model and say what to do; see ErrOllamaUnavailable, ErrModelNotFound,
// ErrTimeout and ErrEmptyReply.
func (o *Ollama) Chat(ctx context.Context, msgs []Message) (string, error) {
	am := make([]api.Message, len(msgs))
	for i, m := range msgs {
		am[i] = api.Message{Role: m.Role, Content: m.Content}
	}
	return o.c.Chat(ctx, am, o.options)
}

// ChatJSON sends msgs with schema as Ollama's `format` (structured
// outputs) and returns the answer with its token counts.
func (o *Ollama) ChatJSON(ctx context.Context, msgs []Message, schema []byte) (Reply, error) {
	am := make([]api.Message, len(msgs))
	for i, m := range msgs {
		am[i] = api.Message{Role: m.Role, Content: m.Content}
	}
	r, err := o.c.ChatFormat(ctx, am, o.options, schema)
	return Reply{Text: r.Text, PromptTokens: r.PromptTokens, OutputTokens: r.OutputTokens}, err
}
