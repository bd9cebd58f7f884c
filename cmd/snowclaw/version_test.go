package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// releaseVersion is the version releaseBin is stamped with.
const releaseVersion = "v9.8.7-test"

var (
	releaseOnce sync.Once
	releaseBin  string
	releaseErr  error
)

// releaseBuild builds the binary once as a release is built: the version
// given with -X main.version, and the commit stamped when git can tell
// it (-buildvcs=auto, whatever GOFLAGS says).
func releaseBuild(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary; go test without -short runs it")
	}
	releaseOnce.Do(func() {
		dir, err := os.MkdirTemp("", "snowclaw-release-")
		if err != nil {
			releaseErr = err
			return
		}
		releaseBin = filepath.Join(dir, "snowclaw")
		out, err := exec.Command("go", "build", "-buildvcs=auto", "-ldflags", "-X main.version="+releaseVersion, "-o", releaseBin, ".").CombinedOutput()
		if err != nil {
			releaseErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if releaseErr != nil {
		t.Fatal(releaseErr)
	}
	return releaseBin
}

// TestVersion_Ldflags: a release build's -X main.version is what every
// spelling of the version command prints.
func TestVersion_Ldflags(t *testing.T) {
	bin := releaseBuild(t)
	for _, arg := range []string{"--version", "version", "-version"} {
		out, err := exec.Command(bin, arg).Output()
		if err != nil || strings.TrimSpace(string(out)) != "snowclaw "+releaseVersion {
			t.Errorf("snowclaw %s: %q, %v", arg, out, err)
		}
	}
}

func TestLoopbackFor(t *testing.T) {
	for in, want := range map[string]string{
		"0.0.0.0:3334": "127.0.0.1:3334", ":3334": "127.0.0.1:3334", "[::]:80": "[::1]:80",
		"127.0.0.1:9": "127.0.0.1:9", "10.1.2.3:3334": "10.1.2.3:3334",
	} {
		if got := loopbackFor(in); got != want {
			t.Errorf("loopbackFor(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestHealth: `snowclaw health` succeeds against a running relay, found
// by --url or by the configured address, and fails (exit non-zero, a
// message naming the URL) when nothing answers.
func TestHealth(t *testing.T) {
	c := startChild(t, t.TempDir())
	httpURL := "http" + strings.TrimPrefix(c.url, "ws")
	addr := strings.TrimPrefix(httpURL, "http://")
	for _, args := range [][]string{
		{"health", "--url", httpURL + "/healthz"},
		{"health", "--addr", addr, "--wait", "--timeout", "30s"}, // ready once its (empty) index is
		{"health", "--addr", addr},
	} {
		var out, errOut bytes.Buffer
		if err := run(context.Background(), args, nil, &out, &errOut); err != nil || !strings.HasPrefix(out.String(), "ok ") {
			t.Fatalf("%q: %v %q %s", args, err, out.String(), errOut.String())
		}
	}
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"health"}, []string{"SNOWCLAW_ADDR=" + addr}, &out, &errOut)
	if err != nil {
		t.Fatalf("health with SNOWCLAW_ADDR: %v", err)
	}
	c.cmd.Process.Kill()
	c.cmd.Wait()
	err = run(context.Background(), []string{"health", "--url", httpURL + "/healthz"}, nil, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), httpURL) {
		t.Fatalf("a stopped relay: err = %v, want one naming %s", err, httpURL)
	}
}
