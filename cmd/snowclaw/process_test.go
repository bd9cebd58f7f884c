package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/internal/wsclient"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// snowclawBin builds the real binary once per test run.
func snowclawBin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary; go test without -short runs it")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "snowclaw-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "snowclaw")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

type child struct {
	cmd *exec.Cmd
	url string
	log *strings.Builder
}

// startChild runs `snowclaw serve` on a random port and waits for its URL.
func startChild(t *testing.T, data string, extra ...string) *child {
	t.Helper()
	return startChildEnv(t, data, nil, extra...)
}

// startChildEnv is startChild with env added to the environment.
func startChildEnv(t *testing.T, data string, env []string, extra ...string) *child {
	t.Helper()
	return startChildBin(t, snowclawBin(t), data, env, extra...)
}

// startChildBin is startChildEnv running the binary bin.
func startChildBin(t *testing.T, bin, data string, env []string, extra ...string) *child {
	t.Helper()
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", data}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(),
		"SNOWCLAW_RATE_LIMITS_EVENTS_PER_SECOND_IP=0",
		"SNOWCLAW_RATE_LIMITS_EVENTS_PER_SECOND_PUBKEY=0",
		"SNOWCLAW_RATE_LIMITS_CONNECTIONS_PER_SECOND_IP=0")
	cmd.Env = append(cmd.Env, env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := &strings.Builder{}
	cmd.Stderr = &lockedWriter{b: logs}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "snowclaw relay listening on "); ok {
				urls <- u
			}
		}
	}()
	select {
	case u := <-urls:
		return &child{cmd: cmd, url: u, log: logs}
	case <-time.After(20 * time.Second):
		t.Fatalf("relay did not start; stderr:\n%s", logs)
	}
	return nil
}

// publishRaw sends one event and reports whether the relay answered OK true.
func publishRaw(conn *websocket.Conn, evt nostr.Event) bool {
	if err := conn.WriteJSON([]any{"EVENT", evt}); err != nil {
		return false
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		var msg []json.RawMessage
		if err := conn.ReadJSON(&msg); err != nil {
			return false
		}
		var label, id string
		var ok bool
		if len(msg) >= 3 && json.Unmarshal(msg[0], &label) == nil && label == "OK" &&
			json.Unmarshal(msg[1], &id) == nil && id == evt.ID {
			json.Unmarshal(msg[2], &ok)
			return ok
		}
	}
}

type lockedWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// TestProcess_KillNineKeepsAcknowledgedEvents kills the relay with SIGKILL
// while four clients are writing and checks that every event the relay
// acknowledged is there after a restart.
func TestProcess_KillNineKeepsAcknowledgedEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	data := t.TempDir()
	c := startChild(t, data)

	var mu sync.Mutex
	var acked []string
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			// a bare websocket: go-nostr's Publish returns nil when the
			// connection drops before the OK, which would count as acked
			conn, _, err := websocket.DefaultDialer.Dial(c.url, nil)
			if err != nil {
				return
			}
			defer conn.Close()
			sk := nostr.GeneratePrivateKey()
			for i := 0; ctx.Err() == nil; i++ {
				evt := nostr.Event{Kind: 1, CreatedAt: nostr.Now(), Tags: nostr.Tags{}, Content: fmt.Sprintf("writer %d event %d", w, i)}
				evt.Sign(sk)
				if !publishRaw(conn, evt) {
					return // the relay died mid-write
				}
				mu.Lock()
				acked = append(acked, evt.ID)
				mu.Unlock()
			}
		}(w)
	}
	testwait.For(t, "400 acknowledged events", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= 400
	})
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.cmd.Wait()
	cancel()
	wg.Wait()

	mu.Lock()
	want := append([]string(nil), acked...)
	mu.Unlock()
	c2 := startChild(t, data)
	r, err := wsclient.Dial(c2.url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	found := map[string]bool{}
	for i := 0; i < len(want); i += 200 {
		batch := want[i:min(i+200, len(want))]
		evs, closed, err := r.Fetch(nostr.Filter{IDs: batch, Limit: len(batch)}, 10*time.Second)
		if err != nil || closed != "" {
			t.Fatalf("query after restart: %v %s", err, closed)
		}
		for _, e := range evs {
			found[e.ID] = true
		}
	}
	missing := 0
	for i, id := range want {
		if !found[id] {
			missing++
			t.Logf("missing #%d of %d: %s", i, len(want), id)
		}
	}
	t.Logf("%d events acknowledged before SIGKILL, %d found after restart", len(want), len(found))
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged events lost after kill -9", missing, len(want))
	}
}

// TestProcess_SigtermShutsDownCleanly: open subscriptions are closed, the
// process exits 0, and the data is intact on the next start.
func TestProcess_SigtermShutsDownCleanly(t *testing.T) {
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
	evt := nostr.Event{Kind: 1, CreatedAt: nostr.Now(), Tags: nostr.Tags{}, Content: "before shutdown"}
	evt.Sign(sk)
	if err := r.Publish(context.Background(), evt); err != nil {
		t.Fatal(err)
	}
	r.Send("REQ", "live", nostr.Filter{Kinds: []int{1}})
	if _, ok := r.WaitFor("EOSE", "live", 3*time.Second); !ok {
		t.Fatal("no EOSE")
	}
	start := time.Now()
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.Done():
	case <-time.After(8 * time.Second):
		t.Fatal("connection still open 8s after SIGTERM")
	}
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, c.log)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Fatalf("shutdown took %s", d)
	}
	if !strings.Contains(c.log.String(), "snowclaw relay stopped") {
		t.Fatalf("no clean stop in log:\n%s", c.log)
	}
	c2 := startChild(t, data)
	r2, err := wsclient.Dial(c2.url)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	got, _, err := r2.Fetch(nostr.Filter{IDs: []string{evt.ID}}, 5*time.Second)
	if err != nil || len(got) != 1 {
		t.Fatalf("event after restart: %v %v", got, err)
	}
}
