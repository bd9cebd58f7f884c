package search

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
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
	f.Add([]byte(docLogMagic))
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
