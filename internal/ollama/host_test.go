package ollama

import (
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
)

func TestParse_Cases(t *testing.T) {
	cases := []struct{ in, want, err string }{
		{"127.0.0.1:11434", "http://127.0.0.1:11434", ""},
		{"https://u:p@ollama.example/api/?x=1#f", "https://ollama.example/api", ""},
		{"ftp://host", "", "scheme"},
		{"http://", "", "no host"},
	}
	for _, tc := range cases {
		u, err := parseHost(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseHost(%q) err = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || u.String() != tc.want {
			t.Errorf("parseHost(%q) = %v, %v; want %s", tc.in, u, err, tc.want)
		}
	}
}

func TestUnreachable_Cases(t *testing.T) {
	cases := []struct {
		err  error
		want bool
	}{
		{syscall.ECONNREFUSED, true},
		{&net.DNSError{Err: "no such host"}, true},
		{&net.OpError{Op: "dial", Err: errors.New("x")}, true},
		{&net.OpError{Op: "read", Err: errors.New("x")}, false},
		{errors.New("500"), false},
	}
	for _, tc := range cases {
		if got := unreachable(tc.err); got != tc.want {
			t.Errorf("unreachable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestClip_RuneBoundary(t *testing.T) {
	if got := clip("héllo", 2); got != "h…" {
		t.Fatalf("Clip = %q", got)
	}
	if got := clip("short", 10); got != "short" {
		t.Fatalf("Clip = %q", got)
	}
}
