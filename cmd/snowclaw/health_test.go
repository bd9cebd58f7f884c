package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/relay"
)

// serveNode runs a relay as serve does (the index loading behind it) on
// dir, with progress given to the index's open; it returns the relay's
// HTTP address, its node and a stop function (also run at cleanup).
func serveNode(t *testing.T, dir string, progress func(done, total int64)) (string, *node.Node, func()) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Data = dir
	keys, err := relay.LoadKeys(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	o := nodeOptions(cfg, keys, newLogger(&bytes.Buffer{}, "error"))
	o.Search.Background = true
	o.Search.Search.Progress = progress
	n, err := node.New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Serve(ctx, ln) }()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); <-done; n.Close() }) }
	t.Cleanup(stop)
	return ln.Addr().String(), n, stop
}

// `snowclaw health` asks readiness: while the search index loads it
// fails and says how far the load got (--wait asks until its timeout);
// --live asks only whether the process is up; once the index is ready,
// health and health --wait succeed.
func TestHealth_ReadinessWhileTheIndexLoads(t *testing.T) {
	dir := t.TempDir()
	_, n, stop := serveNode(t, dir, nil) // builds an index to load again
	<-n.Search().Loaded()
	stop()

	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	addr, n, _ := serveNode(t, dir, func(done, total int64) {
		once.Do(func() { close(entered); <-release })
	})
	<-entered
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"health", "--addr", addr}, nil, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), `"status": "starting"`) ||
		!strings.Contains(err.Error(), `"step": "opening"`) {
		t.Fatalf("health while loading: %v, want a 503 that says the index is opening", err)
	}
	err = run(context.Background(), []string{"health", "--addr", addr, "--wait", "--timeout", "1500ms"}, nil, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "still not ready after 1.5s") {
		t.Fatalf("health --wait while loading: %v, want it to give up after its timeout", err)
	}
	if err := run(context.Background(), []string{"health", "--addr", addr, "--live"}, nil, &out, &errOut); err != nil {
		t.Fatalf("health --live while loading: %v", err)
	}
	close(release)
	if err := run(context.Background(), []string{"health", "--addr", addr, "--wait", "--timeout", "60s"}, nil, &out, &errOut); err != nil {
		t.Fatalf("health --wait: %v", err)
	}
	if !n.Search().Ready() {
		t.Fatal("health --wait succeeded before the index was ready")
	}
	if err := run(context.Background(), []string{"health", "--addr", addr}, nil, &out, &errOut); err != nil {
		t.Fatalf("health once ready: %v", err)
	}
}
