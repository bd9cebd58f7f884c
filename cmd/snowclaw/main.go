// Command snowclaw is the one binary of Snowclaw relay: a Nostr relay with
// NIP-29 groups, a memory search engine and a resident agent.
//
//	snowclaw serve [--addr A] [--data DIR] [--owner NPUB] [--config FILE]
//	snowclaw keygen
//	snowclaw keys --data DIR
//	snowclaw reindex --data DIR [--owner NPUB]
//	snowclaw migrate --from badger:DIR|postgres://… --to badger:DIR|postgres://… [--force]
//	snowclaw search "query" [--relay URL] [--sec KEY] [--explain] [--limit N]
//	snowclaw memory get|set|list|items|delete|flush|compact|lessons …
//	snowclaw config get|set <scope> [key=value…]
//	snowclaw privacy export|forget|freeze|unfreeze|destroy <npub> | audit
//	snowclaw mcp [--relay URL] [--sec KEY]
//	snowclaw health [--url URL] [--live] [--wait]
//	snowclaw version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, errUsageShown) {
			fmt.Fprintln(os.Stderr, "snowclaw:", err)
		}
		os.Exit(1)
	}
}

var errUsageShown = errors.New("usage shown")

// usageFailed is a command line its flag set refused, the usage already
// printed. With -h or --help it wraps flag.ErrHelp, which run turns into
// success: asking for help is not an error.
func usageFailed(err error) error { return fmt.Errorf("%w: %w", errUsageShown, err) }

const usage = `snowclaw: a Nostr relay with NIP-29 groups and an agent memory

usage:
  snowclaw serve   [--addr HOST:PORT] [--data DIR] [--owner NPUB|HEX] [--config FILE] [--log-level L]
  snowclaw keygen  print a new key pair
  snowclaw keys    [--data DIR]  print the relay's and the agent's public keys
  snowclaw reindex [--data DIR] [--owner NPUB]  rebuild the search index from the events (relay stopped)
  snowclaw migrate --from badger:DIR|postgres://… --to badger:DIR|postgres://… [--force]  copy every event (relay stopped)
  snowclaw search  "query" [--relay URL] [--sec KEY] [--explain] [--limit N]  NIP-50 search on a relay
  snowclaw eval locomo --data FILE  retrieval metric (LoCoMo JSON) against a real relay
  snowclaw memory  get|set|list|items|delete|flush|compact|lessons …  the agent's memory (owner)
  snowclaw config  get|set <global|group:ID|npub:X> [key=value…]  dynamic config (owner)
  snowclaw privacy export|forget|freeze|unfreeze|destroy <npub>, audit [npub]  a person's rights (owner)
  snowclaw mcp     [--relay URL] [--sec KEY]  the memory tools over MCP on stdin/stdout, acting as KEY
  snowclaw health  [--url URL] [--live] [--wait]  exit 0 when the relay is ready, search included (/readyz; --live: up, /healthz)
  snowclaw version              also --version

Configuration: defaults < config file < SNOWCLAW_* environment < flags.
See config.example.toml for every key.
`

func run(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	err := dispatch(ctx, args, environ, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

func dispatch(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		// a bare command shows what it can do; starting a server (and
		// creating ./snowclaw-data) is asked for with "serve"
		fmt.Fprint(stderr, usage)
		return errUsageShown
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], environ, stdout, stderr)
	case "keygen":
		return runKeygen(args[1:], stdout, stderr)
	case "keys":
		return runKeys(args[1:], environ, stdout, stderr)
	case "reindex":
		return runReindex(ctx, args[1:], environ, stdout, stderr)
	case "migrate":
		return runMigrate(ctx, args[1:], environ, stdout, stderr)
	case "search":
		return runSearch(ctx, args[1:], environ, stdout, stderr)
	case "eval":
		return runEval(ctx, args[1:], environ, stdout, stderr)
	case "memory":
		return runMemory(ctx, args[1:], environ, stdout, stderr)
	case "config":
		return runConfig(ctx, args[1:], environ, stdout, stderr)
	case "privacy":
		return runPrivacy(ctx, args[1:], environ, stdout, stderr)
	case "mcp":
		return runMCP(ctx, args[1:], environ, stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "snowclaw", versionString())
		return nil
	case "health":
		return runHealth(ctx, args[1:], environ, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "snowclaw: unknown command %q\n\n%s", args[0], usage)
	return errUsageShown
}
