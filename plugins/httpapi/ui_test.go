package httpapi

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestUI_VendoredVersion keeps the bundle the page signs with at the
// nostr-tools version the browser tests install.
func TestUI_VendoredVersion(t *testing.T) {
	raw, err := os.ReadFile("../../test/browser/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	want := "// nostr-tools " + strings.TrimLeft(pkg.Dependencies["nostr-tools"], "^~=") + ","
	bundle, err := os.ReadFile("ui/vendor/nostr.bundle.js")
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(string(bundle), "\n"); !strings.HasPrefix(first, want) {
		t.Fatalf("vendored bundle starts %q, want %q (test/browser/package.json)", first, want)
	}
}
