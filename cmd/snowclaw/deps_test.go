package main

import (
	"os/exec"
	"path"
	"strings"
	"testing"
)

// TestBinary_LinksNoTestCode: the binary serve runs from carries no test
// helper. A fake model or a test database harness linked into it is
// code that can be reached in production and was never meant to be; the
// `testing` package in it means some import pulled one in.
func TestBinary_LinksNoTestCode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list named only %d packages: %q", len(deps), deps)
	}
	for _, p := range deps {
		own := strings.HasPrefix(p, "github.com/snowclaw/snowclaw")
		if p == "testing" || strings.HasPrefix(p, "testing/") || p == "net/http/httptest" ||
			own && strings.HasSuffix(path.Base(p), "test") {
			t.Errorf("the binary links %s", p)
		}
	}
}
