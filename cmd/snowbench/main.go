// Command snowbench measures the snowclaw relay from outside, the way
// clients see it, against a bare khatru relay over the same store (badger,
// and bluge for search) in the same run. It is a separate binary so that
// khatru never enters snowclaw's import graph.
//
//	snowbench ingest   publish signed kind 1 notes from authenticated
//	                   connections to `snowclaw serve` and to the bare relay,
//	                   alternating, and print events/s and the ratio
//	snowbench search   write a seeded memory corpus into a store, start both
//	                   relays over copies of it (start-up, reindex docs/s),
//	                   then time NIP-50 REQs over websocket (p50/p95/p99, RSS)
//	snowbench bare     run the bare relay (the other commands start it)
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
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "snowbench:", err)
		os.Exit(1)
	}
}

const usage = `usage: snowbench <command> [flags]

  ingest   EVENT → OK throughput, snowclaw (search and agent on) vs bare khatru+badger
  search   NIP-50 latency, start-up and reindex rate, snowclaw vs bare khatru+badger+bluge
  cluster  snowclaw over badger and over one PostgreSQL with 1, 2, … instances:
           ingest events/s and OK latency, CPU per event of each relay and of
           PostgreSQL, WAL flushes and lock waits per event, search p50/p95,
           cross-instance live latency, RSS
  joins    NIP-29 joins/s into one group as it grows, badger and PostgreSQL
           (1 and 2 instances), relay CPU per join, the second's lag
  bare     run the bare khatru relay (started by the commands above)

snowbench <command> --help lists a command's flags.
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command")
	}
	switch args[0] {
	case "ingest":
		return runIngest(ctx, args[1:], stdout, stderr)
	case "search":
		return runSearch(ctx, args[1:], stdout, stderr)
	case "bare":
		return runBare(ctx, args[1:], stdout, stderr)
	case "cluster":
		return runCluster(ctx, args[1:], stdout, stderr)
	case "joins":
		return runJoins(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
