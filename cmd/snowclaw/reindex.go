package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/plugins/memsearch"
	"github.com/snowclaw/snowclaw/relay/store"
)

// runReindex rebuilds the search index from the stored events. It opens
// the event store and the index and nothing else (no relay, groups,
// agent or rights). The relay must be stopped: a badger store is opened
// exclusively, and the index directory is the relay's. With the
// PostgreSQL backend the store is the shared one.
func runReindex(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	cfg, keys, err := dataDirKeys("reindex", args, environ, stderr)
	if err != nil {
		return err
	}
	agentPK, err := nostr.GetPublicKey(keys.AgentSecret)
	if err != nil {
		return fmt.Errorf("agent key: %w", err)
	}
	st, err := node.OpenStore(ctx, storeOptions(cfg), cfg.Data, cfg.Limits.MaxLimit, newLogger(stderr, "warn"))
	if err != nil {
		if errors.Is(err, store.ErrStoreInUse) {
			return fmt.Errorf("the store in %s is in use: stop the running relay first", cfg.Data)
		}
		return err
	}
	defer st.Close()
	bar := newProgressBar(stdout)
	o := searchOptions(cfg)
	o.ForceRebuild, o.Progress = true, bar.update
	o.AgentPubkey, o.AgentSecret, o.OwnerPubkey = agentPK, keys.AgentSecret, cfg.Owner
	o.Store, o.Logger = st, newLogger(stderr, "warn")
	// nobody searches this index: it only gets built
	o.CanRead = func(string, *nostr.Event) bool { return false }
	start := time.Now()
	mem, err := memsearch.Open(ctx, o)
	if err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	defer mem.Close()
	bar.finish()
	fmt.Fprintf(stdout, "reindexed %d documents in %s\n", mem.Count(), time.Since(start).Round(time.Millisecond))
	return nil
}

// progressBar draws "[=====>    ] 1234 docs" on one terminal line.
type progressBar struct {
	w     io.Writer
	start time.Time
	last  time.Time
}

func newProgressBar(w io.Writer) *progressBar { return &progressBar{w: w, start: time.Now()} }

func (p *progressBar) update(done, total int) {
	if time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	rate := float64(done) / time.Since(p.start).Seconds()
	if total > 0 {
		width := 30
		filled := done * width / total
		fmt.Fprintf(p.w, "\r[%s%s] %d/%d docs, %.0f/s", strings.Repeat("=", filled), strings.Repeat(" ", width-filled), done, total, rate)
		return
	}
	spin := `|/-\`[int(time.Since(p.start)/(200*time.Millisecond))%4]
	fmt.Fprintf(p.w, "\r%c %d docs indexed, %.0f/s", spin, done, rate)
}

func (p *progressBar) finish() {
	if !p.last.IsZero() {
		fmt.Fprintln(p.w)
	}
}
