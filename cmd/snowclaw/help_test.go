package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// TestHelp: asking any command for help prints it and succeeds (exit 0),
// does nothing else (keygen makes no key, serve starts no server), and a
// bare snowclaw shows the usage instead of starting a relay.
func TestHelp(t *testing.T) {
	t.Chdir(t.TempDir()) // a command that did start would leave a data dir here
	for _, args := range [][]string{
		{"--help"}, {"-h"}, {"help"},
		{"serve", "--help"}, {"serve", "-h"},
		{"keygen", "--help"},
		{"keys", "--help"},
		{"reindex", "--help"},
		{"migrate", "--help"},
		{"search", "--help"},
		{"eval", "locomo", "--help"},
		{"memory", "--help"}, {"memory", "items", "--help"},
		{"config", "--help"}, {"config", "get", "--help"},
		{"privacy", "--help"},
		{"mcp", "--help"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if err := run(context.Background(), args, nil, &stdout, &stderr); err != nil {
				t.Fatalf("err = %v, want help and success\nstderr: %s", err, stderr.String())
			}
			if stdout.Len()+stderr.Len() == 0 {
				t.Fatal("no help printed")
			}
			if strings.Contains(stdout.String(), "nsec") {
				t.Fatalf("help made a key:\n%s", stdout.String())
			}
		})
	}
}

func TestBareAndWrongUsage(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, tc := range []struct {
		args []string
		want string // on stderr
	}{
		{nil, "usage:"},
		{[]string{"serve", "--no-such-flag"}, "no-such-flag"},
		{[]string{"keygen", "extra"}, "usage: snowclaw keygen"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), tc.args, nil, &stdout, &stderr)
		if !errors.Is(err, errUsageShown) {
			t.Errorf("%q: err = %v, want the usage refusal", tc.args, err)
		}
		if !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: stderr %q lacks %q", tc.args, stderr.String(), tc.want)
		}
	}
}
