package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/internal/testdisk"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/internal/wsclient"
	"github.com/snowclaw/snowclaw/relay/store"
)

// smallestReserve is the environment of a relay guarded by the smallest
// disk reserve the config accepts.
var smallestReserve = []string{"SNOWCLAW_STORE_MIN_FREE_MB=" + strconv.Itoa(store.BadgerMinFree.MB())}

// publishTo sends one event to url and returns the relay's answer.
func publishTo(url string, evt nostr.Event) error {
	c, err := wsclient.Dial(url)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Scaled(10*time.Second))
	defer cancel()
	return c.Publish(ctx, evt)
}

func note(sk, content string) nostr.Event {
	evt := nostr.Event{Kind: 1, CreatedAt: nostr.Now(), Content: content, Tags: nostr.Tags{}}
	evt.Sign(sk)
	return evt
}

// TestProcess_StartOnAFullDiskIsReadOnlyUntilSpaceIsBack: snowclaw serve
// started on a disk with no space left does not crash-loop: it logs that
// its store is read-only, serves what it holds, refuses writes with
// "error: disk full", and once space is freed opens its store read-write
// on the same address by itself and takes writes again.
func TestProcess_StartOnAFullDiskIsReadOnlyUntilSpaceIsBack(t *testing.T) {
	bin := snowclawBin(t)
	disk := testdisk.Small(t, 320)
	data := filepath.Join(disk, "data")
	sk := nostr.GeneratePrivateKey()
	ch := startChildBin(t, bin, data, smallestReserve)
	kept := note(sk, "stored before the disk filled")
	if err := publishTo(ch.url, kept); err != nil {
		t.Fatal(err)
	}
	ch.cmd.Process.Signal(syscall.SIGTERM)
	if err := ch.cmd.Wait(); err != nil {
		t.Fatalf("stopping: %v\n%s", err, logOf(ch))
	}

	fill := testdisk.Fill(t, disk, 0)
	ch = startChildBin(t, bin, data, smallestReserve)
	if !strings.Contains(logOf(ch), "disk full at start: the event store is open read-only") {
		t.Fatalf("no word of the read-only store at start:\n%s", logOf(ch))
	}
	c, err := wsclient.Dial(ch.url)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := c.Fetch(nostr.Filter{IDs: []string{kept.ID}}, testwait.Scaled(10*time.Second))
	c.Close()
	if err != nil || len(got) != 1 {
		t.Fatalf("reading on a full disk: %v, %d events", err, len(got))
	}
	err = publishTo(ch.url, note(sk, "on a full disk"))
	if r, ok := errors.AsType[*wsclient.Refused](err); !ok || !strings.HasPrefix(r.Reason, "error: disk full") {
		t.Fatalf("writing on a full disk: %v", err)
	}

	fill.Remove()
	after := note(sk, "once space was freed")
	testwait.Within(t, 30*time.Second, "the relay to take writes again once space is freed", func() bool {
		return publishTo(ch.url, after) == nil // refused, or not listening for the moment of the reopening
	})
	if !strings.Contains(logOf(ch), "disk space is back: closing every connection and opening the event store read-write") {
		t.Fatalf("no word of the reopening:\n%s", logOf(ch))
	}
	if strings.Contains(logOf(ch), "panic") || ch.cmd.Process.Signal(syscall.Signal(0)) != nil {
		t.Fatalf("the relay died:\n%s", logOf(ch))
	}
}

// TestProcess_FullDiskItCannotOpenOnIsOneLine: where badger cannot be
// opened at all without space (no store yet; a store left by kill -9,
// whose write-ahead log must be replayed), snowclaw serve exits non-zero
// with one line saying why, never a SIGBUS or panic trace.
func TestProcess_FullDiskItCannotOpenOnIsOneLine(t *testing.T) {
	bin := snowclawBin(t)
	disk := testdisk.Small(t, 320)
	crashed := filepath.Join(disk, "crashed")
	ch := startChildBin(t, bin, crashed, smallestReserve)
	// a write-ahead log of a few MiB, more than will be left: replaying
	// it flushes a table of about that size through mmap
	sk := nostr.GeneratePrivateKey()
	for i := range 60 {
		b := make([]byte, 30_000)
		rand.Read(b) // incompressible: the table is as big as the log
		if err := publishTo(ch.url, note(sk, fmt.Sprintf("%d %x", i, b))); err != nil {
			t.Fatal(err)
		}
	}
	ch.cmd.Process.Kill()
	ch.cmd.Wait()
	testdisk.Fill(t, disk, 1)

	for _, c := range []struct{ dir, why string }{
		{filepath.Join(disk, "fresh"), "there is no store yet"},
		{crashed, "it was not closed cleanly"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), testwait.Scaled(30*time.Second))
		cmd := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--data", c.dir)
		cmd.Env = append(cmd.Environ(), smallestReserve...)
		out, err := cmd.CombinedOutput()
		timedOut := ctx.Err() != nil
		cancel()
		if timedOut {
			t.Fatalf("%s: serve on a disk it cannot open did not exit within the bound\n%s", c.dir, out)
		}
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Fatalf("%s: serve on a full disk: %v, want a non-zero exit\n%s", c.dir, err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		last := lines[len(lines)-1]
		if !strings.HasPrefix(last, "snowclaw: event store ") || !strings.Contains(last, "disk full: ") || !strings.Contains(last, c.why) {
			t.Fatalf("%s: the last line does not say why:\n%s", c.dir, out)
		}
		for _, bad := range []string{"SIGBUS", "panic", "goroutine "} {
			if strings.Contains(string(out), bad) {
				t.Fatalf("%s: a trace (%s):\n%s", c.dir, bad, out)
			}
		}
	}
}
