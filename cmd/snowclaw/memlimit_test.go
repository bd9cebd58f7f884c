package main

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestDecideMemoryLimit(t *testing.T) {
	const v2, v1 = "/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"
	tests := []struct {
		name    string
		mb      int
		env     string            // GOMEMLIMIT
		files   map[string]string // cgroup files present
		readErr error
		want    memoryLimit
		wantErr bool
	}{
		{name: "EnvWinsOverConfig", mb: 1000, env: "500MiB", want: memoryLimit{Source: "GOMEMLIMIT"}},
		{name: "EnvWinsOverCgroup", env: "500MiB", files: map[string]string{v2: "4294967296\n"}, want: memoryLimit{Source: "GOMEMLIMIT"}},
		{name: "Config", mb: 2800, files: map[string]string{v2: "4294967296\n"}, want: memoryLimit{Bytes: 2800 << 20, Source: "config"}},
		{name: "Off", mb: -1, files: map[string]string{v2: "4294967296\n"}, want: memoryLimit{Source: "off"}},
		{name: "CgroupV2", files: map[string]string{v2: "4294967296\n"}, want: memoryLimit{Bytes: 3865470566, Source: "cgroup"}},
		{name: "CgroupV2Unlimited", files: map[string]string{v2: "max\n", v1: "1073741824\n"}, want: memoryLimit{Source: "none"}},
		{name: "CgroupV1", files: map[string]string{v1: "1073741824\n"}, want: memoryLimit{Bytes: 966367641, Source: "cgroup"}},
		{name: "CgroupV1Unlimited", files: map[string]string{v1: "9223372036854771712\n"}, want: memoryLimit{Source: "none"}},
		{name: "NoCgroup", want: memoryLimit{Source: "none"}},
		{name: "CgroupGarbage", files: map[string]string{v2: "lots\n"}, wantErr: true},
		{name: "CgroupUnreadable", readErr: fs.ErrPermission, wantErr: true},
		{name: "BadValue", mb: -2, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == "GOMEMLIMIT" {
					return tt.env
				}
				return ""
			}
			read := func(p string) ([]byte, error) {
				if tt.readErr != nil {
					return nil, tt.readErr
				}
				if s, ok := tt.files[p]; ok {
					return []byte(s), nil
				}
				return nil, fs.ErrNotExist
			}
			got, err := decideMemoryLimit(tt.mb, getenv, read)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if tt.readErr != nil && !errors.Is(err, tt.readErr) {
				t.Fatalf("err = %v, want it to wrap %v", err, tt.readErr)
			}
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

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
