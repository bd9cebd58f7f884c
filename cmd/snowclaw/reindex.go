package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/progress"
	"github.com/snowclaw/snowclaw/plugins/memsearch"
	"github.com/snowclaw/snowclaw/relay/store"
)

// runReindex rebuilds the search index from the stored events. It opens
// the event store and the index and nothing else (no relay, groups,
// agent or rights). The relay must be stopped: a badger store is opened
// exclusively, and the index directory is the relay's. With the
// PostgreSQL backend the store is the shared one.
//
// The owner (--owner, or owner / SNOWCLAW_OWNER as for serve) matters to
// what the index keeps on disk: every text is sanitized before it is
// indexed, and a 64-hex string nobody declared public could be a secret
// key, so it is shortened. The owner's key is public: with the owner
// given, memories that name the owner by hex key stay findable by it, as
// on the running relay. (Which memories the owner's corrections hide is
// worked out when the relay opens the index, with its own owner.)
func runReindex(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	cfg, keys, err := dataDirKeys("reindex", args, environ, stderr, func(fs *flag.FlagSet, fl *serveFlags) {
		fs.StringVar(&fl.owner, "owner", "", "owner public key, npub or hex (default: owner from the config or SNOWCLAW_OWNER)")
		fs.StringVar(&fl.storeURL, "store-url", "", "PostgreSQL URL of the shared event store, as for serve (sets store.backend = postgres)")
	})
	if err != nil {
		return err
	}
	agentPK, err := nostr.GetPublicKey(keys.AgentSecret)
	if err != nil {
		return fmt.Errorf("agent key: %w", err)
	}
	// progress and warnings share stderr: the logger writes through the
	// bar, so a warning never lands in the middle of the progress line
	bar := progress.New(stderr, "reindex", "docs")
	logger := newLogger(bar.Writer(), "warn")
	st, err := node.OpenStore(ctx, storeOptions(cfg), cfg.Data, cfg.Limits.MaxLimit, logger)
	if err != nil {
		if errors.Is(err, store.ErrStoreInUse) {
			return fmt.Errorf("the store in %s is in use: stop the running relay first", cfg.Data)
		}
		return err
	}
	defer st.Close()
	if cfg.Owner == "" {
		logger.Warn("no owner given: the owner's hex key in memories is indexed shortened, as a possible secret, and searches for it will miss; pass --owner (or set SNOWCLAW_OWNER) as the relay runs with")
	}
	o := searchOptions(cfg)
	o.ForceRebuild, o.Progress = true, bar.Update
	o.AgentPubkey, o.AgentSecret, o.OwnerPubkey = agentPK, keys.AgentSecret, cfg.Owner
	o.Store, o.Logger = st, logger
	// nobody searches this index: it only gets built
	o.CanRead = func(string, *nostr.Event) bool { return false }
	start := time.Now()
	mem, err := memsearch.Open(ctx, o)
	bar.Finish()
	if err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	defer mem.Close()
	fmt.Fprintf(stdout, "reindexed %d documents in %s\n", mem.Count(), time.Since(start).Round(time.Millisecond))
	return nil
}
