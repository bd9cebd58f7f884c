// Package mcpserver offers the Snowclaw memory to LLM agents as Model
// Context Protocol tools: memory_search, memory_list, memory_get,
// memory_store and memory_forget. It knows no transport and no
// authentication: the caller hands New a Backend already bound to one
// identity (the relay in-process for `snowclaw serve`'s /mcp, or the HTTP
// API for `snowclaw mcp`), so no tool argument can make it act as, or read
// for, anybody else.
package mcpserver

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/snowclaw/snowclaw"
)

// Backend is the memory as one reader sees it: the one interface the
// HTTP API and MCP share (snowclaw.MemoryBackend).
type Backend = snowclaw.MemoryBackend

// Name is the server's name in the MCP handshake.
const Name = "snowclaw"

// instructions is what a client may show its model about the server as a
// whole; the tool descriptions say the rest.
const instructions = `Snowclaw is a Nostr relay with a shared long-term memory. ` +
	`Search it (memory_search) before answering questions that may depend on what was remembered earlier, ` +
	`store durable facts, decisions, preferences and lessons (memory_store), and forget on request (memory_forget). ` +
	`You act as one fixed identity; you see exactly what that identity may read.`

// schemaCache keeps the resolved tool schemas across servers: the relay
// builds one server per HTTP request (see plugins/httpapi/mcp.go), and the schemas
// never change.
var schemaCache = mcp.NewSchemaCache()

// New returns an MCP server offering the five memory tools over b.
func New(b Backend, version string, logger *slog.Logger) *mcp.Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: Name, Title: "Snowclaw memory", Version: version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       logger,
		SchemaCache:  schemaCache,
		// tools only, and a fixed list: no logging capability, and
		// listChanged false, since the tools never change and /mcp is
		// stateless (there is no session a notification could reach);
		// the SDK would otherwise claim listChanged true
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: false}},
	})
	s.AddReceivingMiddleware(prefixToolErrors)
	t := toolDefs()
	mcp.AddTool(s, t.search, func(ctx context.Context, _ *mcp.CallToolRequest, in searchInput) (*mcp.CallToolResult, searchOutput, error) {
		out, err := search(ctx, b, in)
		return nil, out, toolError(logger, "memory_search", err)
	})
	mcp.AddTool(s, t.list, func(ctx context.Context, _ *mcp.CallToolRequest, in snowclaw.ListRequest) (*mcp.CallToolResult, listOutput, error) {
		out, err := b.List(ctx, in)
		if out == nil {
			out = []snowclaw.MemoryView{}
		}
		return nil, listOutput{Memories: out}, toolError(logger, "memory_list", err)
	})
	mcp.AddTool(s, t.get, func(ctx context.Context, _ *mcp.CallToolRequest, in idInput) (*mcp.CallToolResult, snowclaw.MemoryDetail, error) {
		id, err := in.check()
		if err != nil {
			return nil, snowclaw.MemoryDetail{}, err
		}
		out, err := b.Get(ctx, id)
		return nil, out, toolError(logger, "memory_get", err)
	})
	mcp.AddTool(s, t.store, func(ctx context.Context, _ *mcp.CallToolRequest, in snowclaw.StoreRequest) (*mcp.CallToolResult, storeOutput, error) {
		// the schema has no "event"; a signed event is the HTTP API's business
		in.Event = nil
		in.Text = strings.TrimSpace(in.Text)
		if in.Text == "" {
			return nil, storeOutput{}, snowclaw.Invalid("text is empty: say what to remember")
		}
		out, err := b.Store(ctx, in)
		return nil, storeOutput{Memory: out}, toolError(logger, "memory_store", err)
	})
	mcp.AddTool(s, t.forget, func(ctx context.Context, _ *mcp.CallToolRequest, in idInput) (*mcp.CallToolResult, snowclaw.ForgetResponse, error) {
		id, err := in.check()
		if err != nil {
			return nil, snowclaw.ForgetResponse{}, err
		}
		out, err := b.Forget(ctx, id)
		return nil, out, toolError(logger, "memory_forget", err)
	})
	return s
}

// listOutput and storeOutput have the shape of the HTTP API's answers.
type listOutput struct {
	Memories []snowclaw.MemoryView `json:"memories"`
}

type storeOutput struct {
	Memory snowclaw.MemoryView `json:"memory"`
}

// idInput names one memory.
type idInput struct {
	ID string `json:"id"`
}

func (in idInput) check() (string, error) {
	id := strings.ToLower(strings.TrimSpace(in.ID))
	if len(id) != 64 || strings.Trim(id, "0123456789abcdef") != "" {
		return "", snowclaw.Invalid("id %q is not an event id (64 hex digits)", in.ID)
	}
	return id, nil
}

// nip01Prefixes are the machine-readable prefixes of NIP-01 and NIP-42,
// the only ones the relay's reasons use (snowclaw.Reason). Only the SDK's
// own failures are looked at for them: that is text this relay did not
// make; its own errors carry a reason.
var nip01Prefixes = []string{"auth-required:", "restricted:", "invalid:", "blocked:", "error:",
	"rate-limited:", "duplicate:", "pow:", "mute:"}

func hasPrefix(msg string) bool {
	for _, p := range nip01Prefixes {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// toolError turns a backend failure into the tool's error result (the
// model reads it, so it keeps the relay's reason) and logs it.
func toolError(logger *slog.Logger, tool string, err error) error {
	if err == nil {
		return nil
	}
	msg := snowclaw.Text(err)
	if _, ok := errors.AsType[*snowclaw.StoreError](err); ok {
		// the model reads one retryable sentence; the log gets the store's
		// words, once, here where the tool is answered
		logger.Error("the event store failed; the tool's caller is told to try again", "tool", tool, "err", err)
	} else {
		logger.Debug("mcp tool failed", "tool", tool, "err", msg)
	}
	return errors.New(msg)
}

// prefixToolErrors gives the SDK's own argument-validation failures (which
// come back as tool errors before a handler runs) the "invalid:" prefix
// every other tool error has.
func prefixToolErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && err == nil && r.IsError {
			for _, c := range r.Content {
				if t, ok := c.(*mcp.TextContent); ok && !hasPrefix(t.Text) {
					t.Text = "invalid: " + t.Text
				}
			}
		}
		return res, err
	}
}
