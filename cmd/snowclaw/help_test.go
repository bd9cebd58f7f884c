package main

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// helpCommands is every command line that asks for help: each command
// of the table and each of its subcommands, with --help, -h and help.
func helpCommands() [][]string {
	out := [][]string{{"--help"}, {"-h"}, {"help"}, {"-help"}}
	for _, c := range commands {
		out = append(out, []string{c.name, "--help"}, []string{c.name, "-h"})
		for _, s := range c.subs {
			out = append(out, []string{c.name, s.name, "--help"})
		}
	}
	return out
}

// TestHelp: asking any command for help prints it and succeeds (exit 0),
// does nothing else (keygen makes no key, serve starts no server), says
// each default once, and a bare snowclaw shows the usage instead of
// starting a relay. In-process through run, and the real binary's exit
// status.
func TestHelp(t *testing.T) {
	bin := ""
	if !testing.Short() {
		bin = snowclawBin(t) // built here, in the package's directory
	}
	t.Chdir(t.TempDir()) // a command that did start would leave a data dir here
	lines := helpCommands()
	if len(lines) < 40 {
		t.Fatalf("only %d help command lines: the table lost commands", len(lines))
	}
	for _, args := range lines {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if err := run(context.Background(), args, nil, &stdout, &stderr); err != nil {
				t.Fatalf("err = %v, want help and success\nstderr: %s", err, stderr.String())
			}
			out := stdout.String() + stderr.String()
			if len(out) == 0 {
				t.Fatal("no help printed")
			}
			if strings.Contains(stdout.String(), "nsec") {
				t.Fatalf("help made a key:\n%s", stdout.String())
			}
			for _, l := range strings.Split(out, "\n") {
				if strings.Count(l, "(default") > 1 {
					t.Errorf("a default said twice: %q", l)
				}
			}
		})
	}
	if bin == "" {
		return
	}
	for _, args := range lines {
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("snowclaw %s: %v (want exit 0)\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestUsage_ListsEveryCommand: the top-level usage names every command
// and every subcommand of the table, and each subcommand's own usage
// lists it.
func TestUsage_ListsEveryCommand(t *testing.T) {
	u := usage()
	for _, c := range commands {
		if !strings.Contains(u, "snowclaw "+c.name+" ") {
			t.Errorf("usage lacks %s", c.name)
		}
		for _, s := range c.subs {
			if !strings.Contains(u, s.name) {
				t.Errorf("usage lacks %s %s", c.name, s.name)
			}
			var stdout, stderr bytes.Buffer
			run(context.Background(), []string{c.name, "--help"}, nil, &stdout, &stderr)
			if !strings.Contains(stdout.String()+stderr.String(), "\n  "+s.name+" ") && !strings.Contains(stdout.String()+stderr.String(), "\n  "+s.name+"\n") {
				t.Errorf("%s --help lacks %s:\n%s%s", c.name, s.name, stdout.String(), stderr.String())
			}
		}
	}
	for _, want := range []string{"eval     locomo|learning", "rectify|promote", "restore|status|context"} {
		if !strings.Contains(u, want) {
			t.Errorf("usage lacks %q:\n%s", want, u)
		}
	}
}

// TestSubcommands_Dispatch: every subcommand the usage lists is one its
// command runs: against a relay that is not there, each fails reaching
// it (or for a missing argument), never as an unknown command.
func TestSubcommands_Dispatch(t *testing.T) {
	env := []string{"SNOWCLAW_SEC=" + newKey().nsec}
	npub := newKey().npub
	for _, c := range commands {
		if c.name == "eval" {
			continue // a benchmark runs a relay of its own: TestHelp reaches each
		}
		for _, s := range c.subs {
			args := []string{c.name, s.name}
			switch c.name {
			case "privacy":
				args = append(args, npub, "some words")
			case "config":
				args = append(args, "global", "respond_mode=all")
			case "memory":
				args = append(args, "list")
			}
			args = append(args, "--relay", "ws://127.0.0.1:1")
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), args, env, &stdout, &stderr)
			if err == nil || errors.Is(err, errUsageShown) || strings.Contains(err.Error(), "unknown command") {
				t.Errorf("%q: err %v, want it to try the relay\n%s", args, err, stderr.String())
			}
		}
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
		{[]string{"eval"}, "usage: snowclaw eval"},
		{[]string{"memory"}, "usage: snowclaw memory"},
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

// TestErrorText: a line repeated in an error (pgx reports the same
// refused dial for its TLS and its plain attempt) is printed once; the
// rest stays as it was.
func TestErrorText(t *testing.T) {
	err := errors.New("migrate: --from: postgres store at postgres://x@127.0.0.1:1/x: failed to connect to `user=x database=x`:\n" +
		"\t127.0.0.1:1 (127.0.0.1): dial error: dial tcp 127.0.0.1:1: connect: connection refused\n" +
		"\t127.0.0.1:1 (127.0.0.1): dial error: dial tcp 127.0.0.1:1: connect: connection refused")
	want := "migrate: --from: postgres store at postgres://x@127.0.0.1:1/x: failed to connect to `user=x database=x`:\n" +
		"\t127.0.0.1:1 (127.0.0.1): dial error: dial tcp 127.0.0.1:1: connect: connection refused"
	if got := errorText(err); got != want {
		t.Errorf("errorText:\n%s\nwant\n%s", got, want)
	}
	if got := errorText(errors.New("one\ntwo\n\nthree")); got != "one\ntwo\n\nthree" {
		t.Errorf("distinct lines changed: %q", got)
	}
}
