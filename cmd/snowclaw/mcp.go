package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/groupread"
	"github.com/snowclaw/snowclaw/plugins/mcpserver"
)

// runMCP serves the memory tools over MCP on stdin/stdout for a local MCP
// host (Claude Desktop, an IDE, an agent framework). It is a client of a
// running relay's /api/v1, every request signed with NIP-98 by --sec, so
// the tools see and write exactly what that key may over REQ. Only
// JSON-RPC goes to stdout; logs go to stderr.
func runMCP(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	relayURL := relayFlag(fs, environ, "relay URL (ws://, wss://, http:// or https://)")
	sec := fs.String("sec", "", "nsec or hex secret the tools act as (default $SNOWCLAW_SEC)")
	logLevel := fs.String("log-level", "warn", "debug, info, warn or error (logs go to stderr)")
	if err := fs.Parse(args); err != nil {
		return usageFailed(err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("mcp: unexpected argument %q (it takes only flags)", fs.Arg(0))
	}
	s := *sec
	if s == "" {
		s = envValue(environ, "SNOWCLAW_SEC")
	}
	if s == "" {
		return errors.New("mcp: a key is needed (the tools act as it): pass --sec nsec1… or set SNOWCLAW_SEC")
	}
	sk, err := snowclaw.ParseSecret(s)
	if err != nil {
		return fmt.Errorf("--sec: %w", err)
	}
	// a bounded call: a tool that hangs would stall the host's model turn
	c := &ownerClient{relay: *relayURL, sk: sk, http: &http.Client{Timeout: time.Minute}}
	if _, err := c.httpURL("/"); err != nil {
		return err
	}
	logger := newLogger(stderr, *logLevel)
	// the group memories c's key is a member of, opened with its own keys
	keys, fetch, err := groupread.ForMember(c.relay, c.sk, nil)
	if err != nil {
		return err
	}
	server := mcpserver.New(groupread.Backend{MemoryBackend: apiBackend{c}, Keys: keys, Fetch: fetch}, versionString(), logger)
	err = server.Run(ctx, &mcp.IOTransport{Reader: os.Stdin, Writer: nopWriteCloser{stdout}})
	if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil // the host closed stdin, or we were told to stop
	}
	return fmt.Errorf("mcp: %w", err)
}

// apiBackend is the relay's HTTP API as the key of c sees it.
type apiBackend struct{ c *ownerClient }

func (b apiBackend) Search(ctx context.Context, req snowclaw.SearchRequest) (snowclaw.SearchResponse, error) {
	q := url.Values{"q": {req.Query}}
	if req.Limit > 0 {
		q.Set("limit", strconv.Itoa(req.Limit))
	}
	if len(req.Kinds) > 0 {
		kinds := make([]string, len(req.Kinds))
		for i, k := range req.Kinds {
			kinds[i] = strconv.Itoa(k)
		}
		q.Set("kinds", strings.Join(kinds, ","))
	}
	if req.Explain {
		q.Set("explain", "1")
	}
	if req.Remote {
		q.Set("remote", "1")
	}
	var out snowclaw.SearchResponse
	return out, b.do(ctx, "GET", "/api/v1/search?"+q.Encode(), nil, &out)
}

func (b apiBackend) List(ctx context.Context, req snowclaw.ListRequest) ([]snowclaw.MemoryView, error) {
	q := url.Values{}
	for k, v := range map[string]string{"tier": string(req.Tier), "topic": req.Topic, "source": req.Source, "group": req.Group} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if req.Until > 0 {
		q.Set("until", strconv.FormatInt(req.Until, 10))
	}
	if req.Limit > 0 {
		q.Set("limit", strconv.Itoa(req.Limit))
	}
	if req.IncludeSuperseded {
		q.Set("include_superseded", "1")
	}
	path := "/api/v1/memories"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out struct {
		Memories []snowclaw.MemoryView `json:"memories"`
	}
	return out.Memories, b.do(ctx, "GET", path, nil, &out)
}

func (b apiBackend) Get(ctx context.Context, id string) (snowclaw.MemoryDetail, error) {
	var out snowclaw.MemoryDetail
	return out, b.do(ctx, "GET", "/api/v1/memories/"+url.PathEscape(id), nil, &out)
}

func (b apiBackend) Store(ctx context.Context, req snowclaw.StoreRequest) (snowclaw.MemoryView, error) {
	var out struct {
		Memory snowclaw.MemoryView `json:"memory"`
	}
	return out.Memory, b.do(ctx, "POST", "/api/v1/memories", req, &out)
}

func (b apiBackend) Forget(ctx context.Context, id string) (snowclaw.ForgetResponse, error) {
	var out snowclaw.ForgetResponse
	return out, b.do(ctx, "DELETE", "/api/v1/memories/"+url.PathEscape(id), nil, &out)
}

// do calls the API and hands the relay's own NIP-01-prefixed reason to
// the tool (call wraps it as "relay: …").
func (b apiBackend) do(ctx context.Context, method, path string, body, out any) error {
	err := b.c.call(ctx, method, path, body, out)
	if err == nil {
		return nil
	}
	var re *relayError
	if errors.As(err, &re) {
		return snowclaw.ParseRefusal(re.msg) // the reason travels as the prefix
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
