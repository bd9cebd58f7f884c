package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/relay"
)

func runKeygen(_ context.Context, args, _ []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("keygen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: snowclaw keygen\n\nprints a new key pair (nsec, npub and their hex); it stores nothing")
	}
	if err := fs.Parse(args); err != nil {
		return usageFailed(err)
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return errUsageShown
	}
	sk := nostr.GeneratePrivateKey()
	pk, err := nostr.GetPublicKey(sk)
	if err != nil {
		return err
	}
	nsec, _ := nip19.EncodePrivateKey(sk)
	npub := snowclaw.NpubOf(pk)
	fmt.Fprintf(stdout, "nsec: %s\nnpub: %s\nsecret hex: %s\npublic hex: %s\n", nsec, npub, sk, pk)
	return nil
}

func runKeys(_ context.Context, args, environ []string, stdout, stderr io.Writer) error {
	_, keys, err := dataDirKeys("keys", args, environ, stderr)
	if err != nil {
		return err
	}
	for _, k := range []struct{ name, sk string }{{"relay", keys.RelaySecret}, {"agent", keys.AgentSecret}} {
		pk, err := nostr.GetPublicKey(k.sk)
		if err != nil {
			return fmt.Errorf("%s key: %w", k.name, err)
		}
		npub := snowclaw.NpubOf(pk)
		fmt.Fprintf(stdout, "%s: %s %s\n", k.name, npub, pk)
	}
	return nil
}

// dataDirKeys parses the flags of the commands that work on a stopped
// relay's data directory (--data, --config) and loads its keys.
func dataDirKeys(name string, args, environ []string, stderr io.Writer, more ...func(*flag.FlagSet, *serveFlags)) (Config, relay.Keys, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var fl serveFlags
	fs.StringVar(&fl.data, "data", "", "data directory (default ./snowclaw-data)")
	fs.StringVar(&fl.config, "config", "", "TOML config file")
	for _, m := range more {
		m(fs, &fl)
	}
	if err := fs.Parse(args); err != nil {
		return Config{}, relay.Keys{}, usageFailed(err)
	}
	cfg, ignored, err := resolveConfig(&fl, environ)
	if err != nil {
		return Config{}, relay.Keys{}, err
	}
	warnIgnoredEnv(stderr, ignored)
	keys, err := relay.LoadKeys(cfg.Data, false)
	return cfg, keys, err
}
