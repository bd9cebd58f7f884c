package main

import (
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestProcess_MemoryLimit starts the binary with relay.memory_limit_mb and
// reads the limit the runtime holds (logged from debug.SetMemoryLimit(-1)),
// then with GOMEMLIMIT beside the key, which must win.
func TestProcess_MemoryLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	for _, tc := range []struct {
		name string
		env  []string
		want string
	}{
		{"Config", []string{"SNOWCLAW_RELAY_MEMORY_LIMIT_MB=1234"}, `limit="1234 MiB" source=config`},
		{"EnvWins", []string{"SNOWCLAW_RELAY_MEMORY_LIMIT_MB=1234", "GOMEMLIMIT=777MiB"}, `limit="777 MiB" source=GOMEMLIMIT`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, kv := range tc.env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			if _, ok := os.LookupEnv("GOMEMLIMIT"); ok && tc.name == "Config" {
				os.Unsetenv("GOMEMLIMIT")
			}
			c := startChild(t, t.TempDir())
			c.cmd.Process.Signal(syscall.SIGTERM)
			if err := c.cmd.Wait(); err != nil { // stderr is complete once Wait returns
				t.Fatalf("exit after SIGTERM: %v\n%s", err, c.log)
			}
			if !strings.Contains(c.log.String(), tc.want) {
				t.Fatalf("log lacks %q:\n%s", tc.want, c.log)
			}
		})
	}
}
