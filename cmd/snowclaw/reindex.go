package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/snowclaw/snowclaw/relay"
	"github.com/snowclaw/snowclaw/relay/store"
)

// runReindex rebuilds the search index from the stored events. The relay
// must be stopped: the store is opened exclusively.
func runReindex(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	cfg, keys, err := dataDirKeys("reindex", args, environ, stderr)
	if err != nil {
		return err
	}
	opts := relayOptions(cfg, keys, newLogger(stderr, "warn"))
	opts.Search.Enabled = true
	opts.Search.Rebuild = true
	bar := newProgressBar(stdout)
	opts.Search.Progress = bar.update
	start := time.Now()
	r, err := relay.New(ctx, opts)
	if err != nil {
		if errors.Is(err, store.ErrStoreInUse) {
			return fmt.Errorf("the store in %s is in use: stop the running relay first", cfg.Data)
		}
		return err
	}
	defer r.Close()
	bar.finish()
	fmt.Fprintf(stdout, "reindexed %d documents in %s\n", r.Search().Count(), time.Since(start).Round(time.Millisecond))
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
