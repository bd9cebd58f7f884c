// Package ollama is the one client of an Ollama server that snowclaw has:
// the agent's chat model (agent/llm) and the search engine's embedder
// (search) both go through it. It owns what talking to Ollama takes: the
// host setting, a per-attempt timeout, retries with a doubling backoff for
// the failures worth retrying, and error messages that name the host and
// model and say what to do, written once for both uses.
package ollama

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
)

// Defaults of Options.
const (
	DefaultHost = "http://127.0.0.1:11434"
	// DefaultTimeout is long because a cold chat model can take that long
	// to load before it writes a word.
	DefaultTimeout = 120 * time.Second
	DefaultRetries = 2
	// DefaultBackoff is short, because the failures worth retrying (a
	// restarting server, a busy runner) either clear quickly or not at all.
	DefaultBackoff = 250 * time.Millisecond
)

// Options configure a Client.
type Options struct {
	// Host is the server, "http://host:port[/path]" or "host:port"
	// (default DefaultHost).
	Host string
	// Model is the model every request names (required).
	Model string
	// Timeout bounds each attempt (default DefaultTimeout).
	Timeout time.Duration
	// Retries is the number of retries of a transient failure. 0 means
	// DefaultRetries; a negative value disables retries.
	Retries int
	// Backoff is the wait before the first retry; it doubles on each
	// further one (default DefaultBackoff).
	Backoff time.Duration
	// HTTPClient is used for requests; nil means a new client with the
	// default transport. It is copied, never changed.
	HTTPClient *http.Client
}

// Client talks to one model on one Ollama server. It is safe for
// concurrent use.
type Client struct {
	api     *api.Client
	host    string // normalised base URL, for messages
	model   string
	timeout time.Duration
	retries int
	backoff time.Duration
}

// New checks the options and returns a client. It makes no request.
func New(o Options) (*Client, error) {
	host := strings.TrimSpace(o.Host)
	if host == "" {
		host = DefaultHost
	}
	base, err := parseHost(host)
	if err != nil {
		return nil, err
	}
	c := &Client{host: base.String(), model: strings.TrimSpace(o.Model), timeout: o.Timeout, retries: o.Retries, backoff: o.Backoff}
	if c.model == "" {
		return nil, errors.New("ollama: no model given")
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	switch {
	case c.retries == 0:
		c.retries = DefaultRetries
	case c.retries < 0:
		c.retries = 0
	}
	if c.backoff <= 0 {
		c.backoff = DefaultBackoff
	}
	c.api = api.NewClient(base, withStatusRecorder(o.HTTPClient))
	return c, nil
}

// Host returns the base URL of the server.
func (c *Client) Host() string { return c.host }

// Model returns the model name.
func (c *Client) Model() string { return c.model }

// Timeout returns the per-attempt timeout.
func (c *Client) Timeout() time.Duration { return c.timeout }

// Retries returns how many times a transient failure is retried.
func (c *Client) Retries() int { return c.retries }

// Errorf returns an error whose message starts with the host, as all of
// the client's do: "ollama at <host>: …".
func (c *Client) Errorf(format string, args ...any) error {
	return fmt.Errorf("ollama at %s: "+format, append([]any{c.host}, args...)...)
}
