package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The store's settings: --store-url implies postgres, and a bad URL is
// named without its password.
func TestConfig_Store(t *testing.T) {
	cfg, err := resolveConfig(&serveFlags{storeURL: "postgres://snow:pw@db:5432/relay"}, nil)
	if err != nil || cfg.Store.Backend != "postgres" || cfg.Store.PostgresURL != "postgres://snow:pw@db:5432/relay" {
		t.Fatalf("--store-url: backend %q url %q err %v; want postgres with the URL", cfg.Store.Backend, cfg.Store.PostgresURL, err)
	}
	cfg, err = resolveConfig(&serveFlags{}, []string{"SNOWCLAW_STORE_BACKEND=postgres", "SNOWCLAW_STORE_POSTGRES_URL=postgres://snow@db/relay"})
	if err != nil || storeOptions(cfg).Backend != "postgres" || storeOptions(cfg).PostgresURL != "postgres://snow@db/relay" {
		t.Fatalf("env: %+v, %v", storeOptions(cfg), err)
	}
	if cfg, err := resolveConfig(&serveFlags{}, nil); err != nil || cfg.Store.Backend != "badger" {
		t.Fatalf("default backend %q, err %v; want badger", cfg.Store.Backend, err)
	}
	_, err = resolveConfig(&serveFlags{storeURL: "postgres://snow:s3cret@db:notaport/x"}, nil)
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "snow@db") {
		t.Fatalf("bad URL: %v; want an error naming snow@db without the password", err)
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
