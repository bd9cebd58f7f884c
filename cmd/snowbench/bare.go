package main

import (
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/blugelabs/bluge"
	"github.com/blugelabs/bluge/analysis/token"
	"github.com/dgraph-io/badger/v4"
	"github.com/fiatjaf/eventstore"
	badgerstore "github.com/fiatjaf/eventstore/badger"
	blugestore "github.com/fiatjaf/eventstore/bluge"
	"github.com/fiatjaf/khatru"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/relay/store"
	"golang.org/x/text/unicode/norm"
)

// runBare is the bare relay: khatru with a badger store and nothing else,
// asking every connection to authenticate as snowclaw does. With --bluge it
// also answers NIP-50 filters from eventstore's bluge index, built from the
// badger store at start when missing (in batches, so the reindex rate is
// bluge's own, not one commit per event).
func runBare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	data := fs.String("data", "", "data directory (events in <data>/events, bluge in <data>/bluge)")
	withBluge := fs.Bool("bluge", false, "answer search filters from a bluge index")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile here until shutdown")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *data == "" {
		return fmt.Errorf("bare: --data is required")
	}
	if *cpuprofile != "" {
		stop, err := startCPUProfile(*cpuprofile)
		if err != nil {
			return err
		}
		defer stop()
	}
	db := &badgerstore.BadgerBackend{
		Path:                  filepath.Join(*data, "events"),
		BadgerOptionsModifier: func(o badger.Options) badger.Options { return o.WithLogger(nil) },
	}
	if err := db.Init(); err != nil {
		return fmt.Errorf("badger: %w", err)
	}
	defer db.Close()
	k := khatru.NewRelay()
	k.Log = log.New(io.Discard, "", 0)
	k.OnConnect = append(k.OnConnect, khatru.RequestAuth)
	k.StoreEvent = append(k.StoreEvent, db.SaveEvent)
	k.DeleteEvent = append(k.DeleteEvent, db.DeleteEvent)
	k.ReplaceEvent = append(k.ReplaceEvent, db.ReplaceEvent)
	k.CountEvents = append(k.CountEvents, db.CountEvents)
	if *withBluge {
		blugeDir := filepath.Join(*data, "bluge")
		if _, err := os.Stat(blugeDir); os.IsNotExist(err) {
			began := time.Now()
			n, err := blugeReindex(ctx, db, blugeDir)
			if err != nil {
				return err
			}
			took := time.Since(began)
			fmt.Fprintf(stdout, "reindexed %d docs in %s\n", n, took.Round(time.Millisecond))
		}
		bl := &blugestore.BlugeBackend{Path: blugeDir, RawEventStore: db}
		if err := bl.Init(); err != nil {
			return fmt.Errorf("bluge: %w", err)
		}
		defer bl.Close()
		k.StoreEvent = append(k.StoreEvent, bl.SaveEvent)
		k.DeleteEvent = append(k.DeleteEvent, bl.DeleteEvent)
		k.QueryEvents = append(k.QueryEvents, func(ctx context.Context, f nostr.Filter) (chan *nostr.Event, error) {
			if f.Search != "" {
				return bl.QueryEvents(ctx, f)
			}
			return db.QueryEvents(ctx, f)
		})
	} else {
		k.QueryEvents = append(k.QueryEvents, db.QueryEvents)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: k}
	fmt.Fprintf(stdout, "bare relay listening on ws://%s\n", ln.Addr())
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}

// blugeReindex indexes every stored event into a new bluge index at dir,
// with the same fields and analyzer as eventstore's bluge backend
// (eventstore/bluge save.go, whose writer is unexported).
func blugeReindex(ctx context.Context, db eventstore.Store, dir string) (int, error) {
	cfg := bluge.DefaultConfig(dir)
	cfg.DefaultSearchAnalyzer.TokenFilters = append(cfg.DefaultSearchAnalyzer.TokenFilters, token.NewUnicodeNormalizeFilter(norm.NFKC))
	w, err := bluge.OpenWriter(cfg)
	if err != nil {
		return 0, fmt.Errorf("bluge: %w", err)
	}
	n := 0
	batch := bluge.NewBatch()
	flush := func() error {
		err := w.Batch(batch)
		batch.Reset()
		return err
	}
	var ferr error
	err = store.Each(ctx, db, nostr.Filter{}, func(evt *nostr.Event) bool {
		id, _ := hex.DecodeString(evt.ID)
		doc := &bluge.Document{bluge.NewKeywordFieldBytes("i", id).Sortable().StoreValue()}
		doc.AddField(bluge.NewTextField("c", evt.Content))
		doc.AddField(bluge.NewTextField("k", strconv.Itoa(evt.Kind)))
		doc.AddField(bluge.NewTextField("p", evt.PubKey[56:]))
		doc.AddField(bluge.NewNumericField("a", float64(evt.CreatedAt)))
		batch.Update(doc.ID(), doc)
		if n++; n%1000 == 0 {
			ferr = flush()
		}
		return ferr == nil
	})
	if err = errors.Join(err, ferr); err == nil {
		err = flush()
	}
	if err != nil {
		w.Close()
		return n, err
	}
	return n, w.Close()
}

// startCPUProfile profiles this process into path until the returned
// function runs.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
