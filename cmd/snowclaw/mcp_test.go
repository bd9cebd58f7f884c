package main

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/snowclaw/snowclaw/internal/mcptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/snowclaw/snowclaw"
)

// startMCP runs `snowclaw mcp` as a child process speaking MCP on its
// stdio, as an MCP host would start it, and connects to it.
func startMCP(t *testing.T, env []string, args ...string) (*mcp.ClientSession, *lockedWriter) {
	t.Helper()
	cmd := exec.Command(snowclawBin(t), append([]string{"mcp"}, args...)...)
	cmd.Env = env
	logs := &lockedWriter{b: &strings.Builder{}}
	cmd.Stderr = logs
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cli-test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to snowclaw mcp: %v\nstderr:\n%s", err, logText(logs))
	}
	t.Cleanup(func() { cs.Close() })
	return cs, logs
}

// logText reads what a child process has logged so far.
func logText(w *lockedWriter) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestCLI_MCPStdio drives `snowclaw mcp` over stdio against a real relay
// process: the five tools, a private memory stored, found, read and
// forgotten by its person, and invisible to another key's MCP process.
func TestCLI_MCPStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	owner, alice, bob := newKey(), newKey(), newKey()
	c := startChild(t, t.TempDir(), "--owner", owner.npub)

	// debug logging proves the logs stay off stdout: a stray line there
	// would break the JSON-RPC stream
	ac, alogs := startMCP(t, nil, "--relay", c.url, "--sec", alice.nsec, "--log-level", "debug")
	tools, err := ac.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if want := []string{"memory_forget", "memory_get", "memory_list", "memory_search", "memory_store"}; !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}

	var stored struct{ Memory snowclaw.MemoryView }
	if msg := mcptest.Call(t, ac, "memory_store", map[string]any{"text": "Alice's locker code at the climbing gym is 4471", "topic": "user/alice/gym"}, &stored); msg != "" {
		t.Fatalf("memory_store: %s\nrelay:\n%s", msg, logText(c.cmd.Stderr.(*lockedWriter)))
	}
	m := stored.Memory
	if len(m.ID) != 64 || m.Tier != snowclaw.TierPrivate || m.Person != alice.pk {
		t.Fatalf("stored %+v", m)
	}
	hit := mcptest.Find(t, ac, "climbing gym locker", m.ID, 5*time.Second)
	if hit == nil || hit.Text != "Alice's locker code at the climbing gym is 4471" {
		t.Fatalf("alice does not find her memory: %+v", hit)
	}
	var detail snowclaw.MemoryDetail
	if msg := mcptest.Call(t, ac, "memory_get", map[string]any{"id": m.ID}, &detail); msg != "" || detail.Memory.ID != m.ID || !strings.Contains(detail.Memory.Text, "4471") {
		t.Fatalf("memory_get: %q %+v", msg, detail.Memory)
	}
	var listed struct{ Memories []snowclaw.MemoryView }
	if msg := mcptest.Call(t, ac, "memory_list", map[string]any{"topic": "user/alice/gym"}, &listed); msg != "" || len(listed.Memories) != 1 || listed.Memories[0].ID != m.ID {
		t.Fatalf("memory_list: %q %+v", msg, listed)
	}

	// bob's MCP process (key from the environment) sees none of it
	bc, _ := startMCP(t, []string{"SNOWCLAW_SEC=" + bob.nsec}, "--relay", c.url)
	if h := mcptest.Find(t, bc, "climbing gym locker", m.ID, 0); h != nil {
		t.Fatalf("bob finds alice's private memory: %+v", h)
	}
	if msg := mcptest.Call(t, bc, "memory_get", map[string]any{"id": m.ID}, &detail); !strings.HasPrefix(msg, "invalid: no ") {
		t.Fatalf("bob's memory_get: %q", msg)
	}

	var forgot snowclaw.ForgetResponse
	if msg := mcptest.Call(t, ac, "memory_forget", map[string]any{"id": m.ID}, &forgot); msg != "" || forgot.Deleted < 1 {
		t.Fatalf("memory_forget: %q %+v", msg, forgot)
	}
	if msg := mcptest.Call(t, ac, "memory_get", map[string]any{"id": m.ID}, &detail); !strings.HasPrefix(msg, "invalid: no ") {
		t.Fatalf("memory_get after forget: %q", msg)
	}
	if h := mcptest.Find(t, ac, "climbing gym locker", m.ID, 0); h != nil {
		t.Fatalf("forgotten memory still found: %+v", h)
	}
	if logs := logText(alogs); !strings.Contains(logs, "level=") {
		t.Fatalf("no logs on stderr with --log-level debug:\n%s", logs)
	}
}

// TestCLI_MCPNeedsKey: without a key the command refuses to start.
func TestCLI_MCPNeedsKey(t *testing.T) {
	out, err := cli(t, nil, "mcp", "--relay", "ws://127.0.0.1:1")
	if err == nil || !strings.Contains(err.Error(), "a key is needed") {
		t.Fatalf("mcp without a key: %v\n%s", err, out)
	}
	out, err = cli(t, []string{"SNOWCLAW_SEC=nsec1bogus"}, "mcp")
	if err == nil || !strings.Contains(err.Error(), "--sec") {
		t.Fatalf("mcp with a bad key: %v\n%s", err, out)
	}
}
