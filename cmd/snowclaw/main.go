// Command snowclaw is the one binary of Snowclaw relay: a Nostr relay with
// NIP-29 groups, a memory search engine and a resident agent. `snowclaw
// help` lists its commands (the commands table below); `snowclaw COMMAND
// --help` tells one.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"unicode/utf8"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, errUsageShown) {
			fmt.Fprintln(os.Stderr, "snowclaw:", errorText(err))
		}
		os.Exit(1)
	}
}

// errorText is err as the user reads it: a line repeated word for word
// (a driver that tries one address twice, over TLS and then without, and
// reports the same refusal for each) is said once.
func errorText(err error) string {
	lines := strings.Split(err.Error(), "\n")
	seen := make(map[string]bool, len(lines))
	out := lines[:0]
	for _, l := range lines {
		if key := strings.TrimSpace(l); key != "" {
			if seen[key] {
				continue
			}
			seen[key] = true
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

var errUsageShown = errors.New("usage shown")

// usageFailed is a command line its flag set refused, the usage already
// printed. With -h or --help it wraps flag.ErrHelp, which run turns into
// success: asking for help is not an error.
func usageFailed(err error) error { return fmt.Errorf("%w: %w", errUsageShown, err) }

// runFunc is a command's entry: its arguments after its name.
type runFunc func(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error

// command is one command of snowclaw. The usage is written from the
// table, dispatch goes through it, and a test asks every command and each
// of its subcommands for --help.
type command struct {
	name  string
	args  string // what follows the name (after the subcommands, if any)
	about string
	subs  []subcommand // the command's own commands, listed a|b|c in the usage
	run   runFunc
}

// subcommand is one command of a command (memory get, eval locomo).
type subcommand struct {
	name, args, about string
}

// commands are every command, in the order the usage lists them.
var commands = []command{
	{name: "serve", args: "[--addr HOST:PORT] [--data DIR] [--owner NPUB|HEX] [--config FILE] [--log-level L] [--store-url URL]", about: "run the relay", run: runServe},
	{name: "keygen", about: "print a new key pair", run: runKeygen},
	{name: "keys", args: "[--data DIR]", about: "print the relay's and the agent's public keys", run: runKeys},
	{name: "reindex", args: "[--data DIR] [--owner NPUB]", about: "rebuild the search index from the events (relay stopped)", run: runReindex},
	{name: "migrate", args: "--from badger:DIR|postgres://… --to badger:DIR|postgres://… [--force]", about: "copy every event (relay stopped)", run: runMigrate},
	{name: "search", args: `"query" [--relay URL] [--sec KEY] [--explain] [--limit N]`, about: "NIP-50 search on a relay", run: runSearch},
	{name: "eval", args: "…", about: "benchmarks against a real relay", subs: evalCommands, run: runEval},
	{name: "memory", args: "…", about: "the agent's memory (owner)", subs: memoryCommands, run: runMemory},
	{name: "config", args: "<global|group:ID|npub:X> [key=value…]", about: "dynamic config (owner)", subs: configCommands, run: runConfig},
	{name: "privacy", args: "<npub> …", about: "a person's rights (owner)", subs: privacyCommands, run: runPrivacy},
	{name: "mcp", args: "[--relay URL] [--sec KEY]", about: "the memory tools over MCP on stdin/stdout, acting as KEY", run: runMCP},
	{name: "health", args: "[--url URL] [--live] [--wait]", about: "exit 0 when the relay is ready, search included (/readyz; --live: up, /healthz)", run: runHealth},
	{name: "version", about: "print the version (also --version)", run: runVersion},
}

// usage is the top-level help, from the commands table.
func usage() string {
	var b strings.Builder
	b.WriteString("snowclaw: a Nostr relay with NIP-29 groups and an agent memory\n\nusage:\n")
	for _, c := range commands {
		args := c.args
		if len(c.subs) > 0 {
			names := make([]string, len(c.subs))
			for i, s := range c.subs {
				names[i] = s.name
			}
			args = strings.TrimSpace(strings.Join(names, "|") + " " + args)
		}
		fmt.Fprintf(&b, "  snowclaw %-8s %s\n", c.name, strings.TrimSpace(args+"  "+c.about))
	}
	b.WriteString(`
snowclaw COMMAND --help tells one command.
Configuration: defaults < config file < SNOWCLAW_* environment < flags.
See config.example.toml for every key.
`)
	return b.String()
}

// subUsage is a command's help: head, one line per subcommand (its
// arguments, then what it does, on the next line when they are long),
// then tail.
func subUsage(head string, subs []subcommand, tail string) string {
	const width = 38
	var b strings.Builder
	b.WriteString(head)
	for _, s := range subs {
		left := strings.TrimSpace(s.name + " " + s.args)
		about := strings.ReplaceAll(s.about, "\n", "\n"+strings.Repeat(" ", width+3))
		switch {
		case about == "":
			fmt.Fprintf(&b, "  %s\n", left)
		case utf8.RuneCountInString(left) > width:
			fmt.Fprintf(&b, "  %s\n  %s %s\n", left, strings.Repeat(" ", width), about)
		default:
			fmt.Fprintf(&b, "  %-*s %s\n", width, left, about) // fmt pads by runes
		}
	}
	b.WriteString(tail)
	return b.String()
}

func run(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	err := dispatch(ctx, args, environ, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

// isHelp is an argument that asks for help rather than for work.
func isHelp(arg string) bool {
	return arg == "help" || arg == "-h" || arg == "--help" || arg == "-help"
}

func dispatch(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		// a bare command shows what it can do; starting a server (and
		// creating ./snowclaw-data) is asked for with "serve"
		fmt.Fprint(stderr, usage())
		return errUsageShown
	}
	name := args[0]
	if isHelp(name) {
		fmt.Fprint(stdout, usage())
		return nil
	}
	if name == "--version" || name == "-version" {
		name = "version"
	}
	for _, c := range commands {
		if c.name == name {
			return c.run(ctx, args[1:], environ, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "snowclaw: unknown command %q\n\n%s", args[0], usage())
	return errUsageShown
}
