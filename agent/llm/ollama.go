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
	"github.com/snowclaw/snowclaw/internal/ollamahost"
)

// Defaults of OllamaOptions.
const (
	DefaultOllamaHost    = "http://127.0.0.1:11434"
	DefaultOllamaTimeout = 120 * time.Second
	DefaultOllamaRetries = 2
)

// defaultOllamaBackoff is the wait before the first retry; it doubles on
// each further retry. Short, because the failures worth retrying (a
// restarting server, a busy runner) either clear quickly or not at all.
const defaultOllamaBackoff = 250 * time.Millisecond

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

	// backoff overrides defaultOllamaBackoff (tests).
	backoff time.Duration
}

// Ollama is a Chatter backed by an Ollama server's /api/chat. It is safe
// for concurrent use.
type Ollama struct {
	client  *api.Client
	host    string // normalised base URL, for messages
	model   string
	timeout time.Duration
	retries int
	backoff time.Duration
	options map[string]any
}

// NewOllama checks the options and returns a chat client. It makes no
// request, so a server that is down is reported by the first Chat, not
// here: the agent must start even when the model is not reachable yet.
func NewOllama(opts OllamaOptions) (*Ollama, error) {
	host := strings.TrimSpace(opts.Host)
	if host == "" {
		host = DefaultOllamaHost
	}
	base, err := ollamahost.Parse(host)
	if err != nil {
		return nil, err
	}
	model := strings.TrimSpace(opts.Model)
	if model == "" {
		return nil, errors.New("ollama: no model given; set one that `ollama list` shows, e.g. llama3.2")
	}
	o := &Ollama{
		host:    base.String(),
		model:   model,
		timeout: opts.Timeout,
		retries: opts.Retries,
		backoff: opts.backoff,
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
	o.client = api.NewClient(base, withStatusRecorder(opts.HTTPClient))
	return o, nil
}

// Name returns "ollama/<model>".
func (o *Ollama) Name() string { return "ollama/" + o.model }

// Host returns the base URL of the Ollama server.
func (o *Ollama) Host() string { return o.host }

// Model returns the model name.
func (o *Ollama) Model() string { return o.model }

// Chat sends msgs to /api/chat without streaming and returns the reply,
// retrying connection failures and HTTP 5xx/429. Errors name the host and
// model and say what to do; see ErrOllamaUnavailable, ErrModelNotFound,
// ErrTimeout and ErrEmptyReply.
func (o *Ollama) Chat(ctx context.Context, msgs []Message) (string, error) {
	if len(msgs) == 0 {
		return "", o.errorf("no messages to send")
	}
	stream := false
	req := &api.ChatRequest{
		Model:    o.model,
		Messages: make([]api.Message, len(msgs)),
		Stream:   &stream,
		Options:  o.options,
	}
	for i, m := range msgs {
		req.Messages[i] = api.Message{Role: m.Role, Content: m.Content}
	}

	wait := o.backoff
	var lastErr error
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return "", o.ctxError(err)
		}
		reply, err := o.do(ctx, req)
		if err == nil {
			reply = stripThinking(reply)
			if strings.TrimSpace(reply) == "" {
				return "", o.describe(ErrEmptyReply, 0)
			}
			return reply, nil
		}
		if cerr := ctx.Err(); cerr != nil {
			return "", o.ctxError(cerr)
		}
		lastErr = err
		if !transient(err) || attempt >= o.retries {
			return "", o.describe(lastErr, attempt)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", o.ctxError(ctx.Err())
		case <-t.C:
		}
		wait *= 2
	}
}

// do makes one request bounded by the per-attempt timeout. It never
// panics: a panic in the client is turned into an error.
func (o *Ollama) do(ctx context.Context, req *api.ChatRequest) (reply string, err error) {
	actx, cancel := context.WithTimeoutCause(ctx, o.timeout, errAttemptTimeout)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			reply, err = "", fmt.Errorf("ollama client panic: %v", r)
		}
	}()
	rec := &statusRecord{}
	actx = context.WithValue(actx, statusRecordKey{}, rec)

	// Even with stream:false a proxy or an older server may stream, so
	// the pieces are joined rather than only the last one kept.
	var b strings.Builder
	err = o.client.Chat(actx, req, func(r api.ChatResponse) error {
		b.WriteString(r.Message.Content)
		if r.Done {
			rec.done = true
		}
		return nil
	})
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(actx), errAttemptTimeout) {
		err = fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return b.String(), rec.explain(err)
}

// stripThinking drops a leading <think>…</think> block, which some
// reasoning models write into the content instead of the thinking field:
// it is not meant for the reader. An unclosed block means the model ran
// out of tokens while still thinking, so nothing of it is a reply.
func stripThinking(s string) string {
	t := strings.TrimLeft(s, " \t\r\n")
	if !strings.HasPrefix(t, "<think>") {
		return s
	}
	end := strings.Index(t, "</think>")
	if end < 0 {
		return ""
	}
	return strings.TrimLeft(t[end+len("</think>"):], " \t\r\n")
}
