package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/internal/wsclient"
)

// TestProcess_TruncatedTableExitsWithAClearMessage (finding 14): a table
// file cut short used to end `snowclaw serve` in a panic trace from
// badger's goroutines. It must exit non-zero with a message naming the
// store and the file and saying what to do, and no trace.
func TestProcess_TruncatedTableExitsWithAClearMessage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	data := t.TempDir()
	c := startChild(t, data)
	r, err := wsclient.Dial(c.url)
	if err != nil {
		t.Fatal(err)
	}
	sk := nostr.GeneratePrivateKey()
	for i := range 10 {
		evt := nostr.Event{Kind: 1, CreatedAt: nostr.Now(), Tags: nostr.Tags{}, Content: "before the damage " + string(rune('a'+i))}
		evt.Sign(sk)
		if err := r.Publish(context.Background(), evt); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	c.cmd.Process.Signal(syscall.SIGTERM) // a clean stop writes the memtable to an .sst
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, c.log)
	}
	events := filepath.Join(data, "events")
	tables, _ := filepath.Glob(filepath.Join(events, "*.sst"))
	if len(tables) == 0 {
		t.Fatal("no .sst after a clean stop")
	}
	fi, err := os.Stat(tables[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(tables[0], fi.Size()/2); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, snowclawBin(t), "serve", "--addr", "127.0.0.1:0", "--data", data).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() <= 0 {
		t.Fatalf("serve on a truncated table: %v (want a non-zero exit)\n%s", err, out)
	}
	msg := string(out)
	for _, want := range []string{"snowclaw:", events, filepath.Base(tables[0]), "damaged", "backup"} {
		if !strings.Contains(msg, want) {
			t.Errorf("output does not mention %q:\n%s", want, msg)
		}
	}
	for _, trace := range []string{"panic:", "goroutine ", ".go:"} {
		if strings.Contains(msg, trace) {
			t.Errorf("output has a trace (%q):\n%s", trace, msg)
		}
	}
}
