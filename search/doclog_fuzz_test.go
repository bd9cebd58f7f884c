package search

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/snowclaw/snowclaw/search/doclog"
)

// FuzzOpenDamagedLog: whatever bytes the doc log holds, Open either loads
// it or reports ErrNeedsRebuild — it never panics and never loads half.
func FuzzOpenDamagedLog(f *testing.F) {
	dir := f.TempDir()
	ix, err := Open(Options{Dir: dir})
	if err != nil {
		f.Fatal(err)
	}
	if err := ix.Index(context.Background(), memDocs()...); err != nil {
		f.Fatal(err)
	}
	if err := ix.Remove(context.Background(), "b"); err != nil {
		f.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(dir, "docs-1.log"))
	if err != nil {
		f.Fatal(err)
	}
	meta, err := os.ReadFile(filepath.Join(dir, metaFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(doclog.Magic))
	f.Fuzz(func(t *testing.T, log []byte) {
		d := t.TempDir()
		if err := os.WriteFile(filepath.Join(d, metaFile), meta, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "docs-1.log"), log, 0o600); err != nil {
			t.Fatal(err)
		}
		ix, err := Open(Options{Dir: d})
		if err != nil {
			if !errors.Is(err, ErrNeedsRebuild) {
				t.Fatalf("Open: %v, want ErrNeedsRebuild", err)
			}
			return
		}
		defer ix.Close()
		if _, err := ix.Search(context.Background(), Query{Text: "badger store"}); err != nil {
			t.Fatalf("search on a loaded log: %v", err)
		}
	})
}

// TestOpen_RandomDamage is the fuzz target's property over 500 seeded
// random damages (bytes overwritten, tail cut), in every test run.
func TestOpen_RandomDamage(t *testing.T) {
	dir := t.TempDir()
	ix := openTest(t, Options{Dir: dir})
	mustIndex(t, ix, memDocs()...)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(filepath.Join(dir, "docs-1.log"))
	meta, _ := os.ReadFile(filepath.Join(dir, metaFile))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		b := slices.Clone(good)
		for range 1 + r.IntN(4) {
			b[r.IntN(len(b))] = byte(r.IntN(256))
		}
		if r.IntN(3) == 0 {
			b = b[:r.IntN(len(b))]
		}
		d := filepath.Join(dir, fmt.Sprint("case", i))
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(d, metaFile), string(meta))
		write(t, filepath.Join(d, "docs-1.log"), string(b))
		ix, err := Open(Options{Dir: d})
		if err != nil {
			if !errors.Is(err, ErrNeedsRebuild) {
				t.Fatalf("case %d: Open: %v", i, err)
			}
			continue
		}
		if _, err := ix.Search(context.Background(), Query{Text: "badger store"}); err != nil {
			t.Fatalf("case %d: search: %v", i, err)
		}
		_ = ix.Close()
	}
}
