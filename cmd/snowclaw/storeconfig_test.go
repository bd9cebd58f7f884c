package main

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/snowclaw/snowclaw/relay/store"
)

// The store's settings: --store-url implies postgres, and a bad URL is
// named without its password.
func TestConfig_Store(t *testing.T) {
	cfg, _, err := resolveConfig(&serveFlags{storeURL: "postgres://snow:pw@db:5432/relay"}, nil)
	if err != nil || cfg.Store.Backend != "postgres" || cfg.Store.PostgresURL != "postgres://snow:pw@db:5432/relay" {
		t.Fatalf("--store-url: backend %q url %q err %v; want postgres with the URL", cfg.Store.Backend, cfg.Store.PostgresURL, err)
	}
	cfg, _, err = resolveConfig(&serveFlags{}, []string{"SNOWCLAW_STORE_BACKEND=postgres", "SNOWCLAW_STORE_POSTGRES_URL=postgres://snow@db/relay"})
	if err != nil || storeOptions(cfg).Backend != "postgres" || storeOptions(cfg).PostgresURL != "postgres://snow@db/relay" {
		t.Fatalf("env: %+v, %v", storeOptions(cfg), err)
	}
	if cfg, _, err := resolveConfig(&serveFlags{}, nil); err != nil || cfg.Store.Backend != "badger" {
		t.Fatalf("default backend %q, err %v; want badger", cfg.Store.Backend, err)
	}
	_, _, err = resolveConfig(&serveFlags{storeURL: "postgres://snow:s3cret@db:notaport/x"}, nil)
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "snow@db") {
		t.Fatalf("bad URL: %v; want an error naming snow@db without the password", err)
	}
}

// store.cache_mb reaches badger: the default, a size, and 0 for off
// (which store.BadgerOptions spells below zero, its 0 being the default).
func TestConfig_StoreCache(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		want int
	}{
		{"Default", nil, store.DefaultCacheMB},
		{"Size", []string{"SNOWCLAW_STORE_CACHE_MB=300"}, 300},
		{"Off", []string{"SNOWCLAW_STORE_CACHE_MB=0"}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _, err := resolveConfig(&serveFlags{}, tc.env)
			if err != nil {
				t.Fatal(err)
			}
			if got := storeOptions(cfg).Badger.CacheMB; got != tc.want {
				t.Fatalf("badger cache %d MiB, want %d", got, tc.want)
			}
		})
	}
	if _, _, err := resolveConfig(&serveFlags{}, []string{"SNOWCLAW_STORE_CACHE_MB=-5"}); err == nil || !strings.Contains(err.Error(), "store.cache_mb") {
		t.Fatalf("cache_mb -5: %v; want an error naming store.cache_mb", err)
	}
}

// reindex takes --store-url as serve does, so an operator on PostgreSQL
// rebuilds an instance's index from the shared store without a config
// file: the flag reaches the store settings (a bad URL is refused by name
// before anything is opened).
func TestReindex_StoreURL(t *testing.T) {
	var out, errb bytes.Buffer
	err := runReindex(context.Background(), []string{"--data", t.TempDir(), "--store-url", "postgres://snow:s3cret@db:notaport/x"}, nil, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "store.postgres_url") || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("reindex --store-url with a bad URL: %v (stderr %q); want the store.postgres_url error without the password", err, errb.String())
	}
}

// store.min_free_mb below what badger writes at once on its own is a
// remote crash (a stranger fills the disk to the reserve, and badger's
// next flush or compaction faults on its mmap): it is refused with the
// least value and what it is made of. 0 (no guard) stays allowed, and
// PostgreSQL, whose events are not on the data volume, takes any.
func TestConfig_StoreReserveHoldsWhatBadgerWritesAtOnce(t *testing.T) {
	least := store.BadgerMinFree.MB()
	if least < 64 || least > 256 {
		t.Fatalf("badger's least reserve is %d MiB: below a memtable and a compaction, or above the 256 MiB default", least)
	}
	for _, mb := range []int{1, 16, least - 1} {
		_, _, err := resolveConfig(&serveFlags{}, []string{"SNOWCLAW_STORE_MIN_FREE_MB=" + strconv.Itoa(mb)})
		if err == nil {
			t.Fatalf("min_free_mb = %d accepted, below badger's %d MiB", mb, least)
		}
		for _, want := range []string{"store.min_free_mb: must be at least " + strconv.Itoa(least), "got " + strconv.Itoa(mb),
			"memtable flush 16 MiB", "level-0 compaction", "value log file", "0 turns the guard off"} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("min_free_mb = %d: %v; want it to say %q", mb, err, want)
			}
		}
	}
	if ex, err := os.ReadFile(examplePath); err != nil || !strings.Contains(string(ex), "must be at least "+strconv.Itoa(least)+":") {
		t.Fatalf("config.example.toml does not give the least min_free_mb, %d (%v)", least, err)
	}
	for _, env := range [][]string{
		nil, // the default, 256
		{"SNOWCLAW_STORE_MIN_FREE_MB=" + strconv.Itoa(least)},
		{"SNOWCLAW_STORE_MIN_FREE_MB=0"},
		{"SNOWCLAW_STORE_MIN_FREE_MB=16", "SNOWCLAW_STORE_BACKEND=postgres", "SNOWCLAW_STORE_POSTGRES_URL=postgres://snow@db/relay"},
	} {
		if _, _, err := resolveConfig(&serveFlags{}, env); err != nil {
			t.Fatalf("%v: %v", env, err)
		}
	}
}
