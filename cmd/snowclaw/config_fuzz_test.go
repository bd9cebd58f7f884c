package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzConfigFile feeds arbitrary bytes to the config file loader and the
// validator: they must never panic, every error must say something, and a
// config they accept must stay valid when validated again (normalization
// is idempotent).
func FuzzConfigFile(f *testing.F) {
	if example, err := os.ReadFile(examplePath); err == nil {
		f.Add(example)
	}
	for _, seed := range []string{
		"",
		"addr = \"0.0.0.0:80\"\n",
		"owner = \"" + ownerNpub + "\"\n",
		"owner = \"" + strings.ToUpper(ownerHex) + "\"\n",
		"owner = \"npub1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq\"\n",
		"owner = 5\n",
		"addr = \"[::1]:3334\"\ndata = \" \"\n",
		"[limits]\nmax_limit = -1\ndefault_limit = 9223372036854775807\n",
		"[limits]\nmax_message_bytes = 1\n",
		"[rate_limits]\nevents_per_second_ip = nan\nqueries_per_second_ip = inf\nconnections_burst_ip = -1\n",
		"[rate_limits]\nevents_per_second_ip = 1e308\nevents_burst_ip = 0\n",
		"[groups]\ncreators = [\"" + otherNpub + "\", \"" + ownerHex + "\", \"x\"]\nmax_moderation_age = \"-1h\"\n",
		"[groups]\nmax_moderation_age = \"9999999999999h\"\n",
		"[groups]\ncreators = \"" + ownerHex + "\"\n",
		"[relay]\nservice_url = \"wss://relay.example.com/path?q=1\"\n",
		"[relay]\nservice_url = \"ws://%zz\"\n",
		"[relay.extra]\nx = 1\n",
		"[[limits]]\n",
		"relay = 1\n",
		"log_level = \"debug\"\nlog_level = \"info\"\n",
		"a.b.c.d = 1\n",
		"\x00\xff",
	} {
		f.Add([]byte(seed))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "fuzz.toml")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg := DefaultConfig()
		err := loadFile(&cfg, p)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "config file "+p) {
				t.Fatalf("file error does not name the file: %q", err)
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "bad config:\n  ") || len(msg) <= len("bad config:\n  ") {
				t.Fatalf("unclear validation error: %q", msg)
			}
			for _, line := range strings.Split(strings.TrimPrefix(msg, "bad config:\n  "), "\n") {
				key, why, ok := strings.Cut(line, ": ")
				if !ok || key == "" || strings.TrimSpace(why) == "" {
					t.Fatalf("validation error line %q does not name a key and a reason (in %q)", line, msg)
				}
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("a config that validated once fails the second time: %v", err)
		}
	})
}
