package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
	badgerstore "github.com/fiatjaf/eventstore/badger"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/internal/eval/benchcorpus"
)

const (
	corpusSeed      = 1 // the corpus and queries of search/bench_test.go
	corpusQuerySeed = 2
	corpusAuthors   = 4
)

// corpusEvents signs the first n memories of the seeded corpus as public
// kind 30078 snow:memory:<topic> items, in parallel: memory i is by author
// i mod 4 (fixed keys, so the events are the same on every run) and
// carries a t tag with its category. It stops when ctx ends (a million
// signatures take a while).
func corpusEvents(ctx context.Context, mems []benchcorpus.Memory) ([]nostr.Event, error) {
	sks := make([]string, corpusAuthors)
	for i := range sks {
		sks[i] = fmt.Sprintf("%064x", 0x5eed0000+i)
	}
	evs := make([]nostr.Event, len(mems))
	workers := runtime.GOMAXPROCS(0)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i, n := w, 0; i < len(mems); i, n = i+workers, n+1 {
				if n%128 == 0 && ctx.Err() != nil {
					errs[w] = ctx.Err()
					return
				}
				m := mems[i]
				evs[i] = nostr.Event{Kind: 30078, CreatedAt: nostr.Timestamp(m.CreatedAt),
					Tags: nostr.Tags{{"d", snowclaw.MemoryItemD(m.Topic)}, {"t", category(m.Topic)}}, Content: m.Content}
				if err := evs[i].Sign(sks[i%corpusAuthors]); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return evs, errors.Join(errs...)
}

// category is the <category> of a topic project/<p>/<c>/<category>-<n>.
func category(topic string) string {
	base := filepath.Base(topic)
	for i := len(base) - 1; i >= 0; i-- {
		if base[i] == '-' {
			return base[:i]
		}
	}
	return base
}

// writeCorpus stores evs straight into a new badger event store at dir
// (the layout both relays read), as a relay that has been running a while
// would hold them; no relay is involved.
func writeCorpus(ctx context.Context, dir string, evs []nostr.Event) (time.Duration, error) {
	began := time.Now()
	tmp := dir + ".tmp"
	_ = os.RemoveAll(tmp)
	db := &badgerstore.BadgerBackend{Path: tmp, BadgerOptionsModifier: func(o badger.Options) badger.Options { return o.WithLogger(nil) }}
	if err := db.Init(); err != nil {
		return 0, err
	}
	workers := 64 // badger groups concurrent commits into one write
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(evs) && errs[w] == nil; i += workers {
				if errs[w] = ctx.Err(); errs[w] == nil {
					errs[w] = db.SaveEvent(ctx, &evs[i])
				}
			}
		})
	}
	wg.Wait()
	db.Close()
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return time.Since(began), os.Rename(tmp, dir)
}

// copyStore copies an event store directory (badger files) to dst.
func copyStore(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	_ = os.RemoveAll(dst)
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		return fmt.Errorf("copying the corpus store: %v: %s", err, out)
	}
	return nil
}
