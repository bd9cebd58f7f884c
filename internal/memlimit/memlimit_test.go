package memlimit

import (
	"errors"
	"io/fs"
	"testing"
)

func TestDecide(t *testing.T) {
	const v2, v1 = "/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"
	tests := []struct {
		name    string
		mb      int
		env     string            // GOMEMLIMIT
		files   map[string]string // cgroup files present
		readErr error
		want    limit
		wantErr bool
	}{
		{name: "EnvWinsOverConfig", mb: 1000, env: "500MiB", want: limit{Source: "GOMEMLIMIT"}},
		{name: "EnvWinsOverCgroup", env: "500MiB", files: map[string]string{v2: "4294967296\n"}, want: limit{Source: "GOMEMLIMIT"}},
		{name: "Config", mb: 2800, files: map[string]string{v2: "4294967296\n"}, want: limit{Bytes: 2800 << 20, Source: "config"}},
		{name: "Off", mb: -1, files: map[string]string{v2: "4294967296\n"}, want: limit{Source: "off"}},
		{name: "CgroupV2", files: map[string]string{v2: "4294967296\n"}, want: limit{Bytes: 3865470566, Source: "cgroup"}},
		{name: "CgroupV2Unlimited", files: map[string]string{v2: "max\n", v1: "1073741824\n"}, want: limit{Source: "none"}},
		{name: "CgroupV1", files: map[string]string{v1: "1073741824\n"}, want: limit{Bytes: 966367641, Source: "cgroup"}},
		{name: "CgroupV1Unlimited", files: map[string]string{v1: "9223372036854771712\n"}, want: limit{Source: "none"}},
		{name: "NoCgroup", want: limit{Source: "none"}},
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
			got, err := decide(tt.mb, getenv, read)
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
