package search

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestIndex_VolatileNeverOnDisk(t *testing.T) {
	dir := t.TempDir()
	ix := openTest(t, Options{Dir: dir})
	const canary = "zebracanary7781"
	mustIndex(t, ix, memDocs()...)
	mustIndex(t, ix, Doc{ID: "secret-id-" + canary, Text: "private note " + canary, Topic: "user/" + canary, Volatile: true})
	if res := search(t, ix, Query{Text: canary}); len(res) == 0 || res[0].Doc.ID != "secret-id-"+canary {
		t.Fatalf("volatile doc not searchable: %v", ids(res))
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), canary) {
			t.Errorf("canary found in %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestIndex_ReopenKeepsDocs(t *testing.T) {
	dir := t.TempDir()
	ix, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	mustIndex(t, ix, memDocs()...)
	mustIndex(t, ix, Doc{ID: "vol", Text: "volatile badger", Volatile: true})
	if err := ix.Remove(context.Background(), "e"); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix = openTest(t, Options{Dir: dir})
	if ix.Count() != 4 {
		t.Fatalf("count after reopen %d, want 4 (volatile and removed docs gone)", ix.Count())
	}
	d, ok, _ := ix.Get("c")
	if !ok || d.Topic != "user/alice/preferences" {
		t.Fatalf("Get(c) = %+v, %v", d, ok)
	}
	if res := search(t, ix, Query{Text: "badger store", Limit: 1}); len(res) != 1 || res[0].Doc.ID != "a" {
		t.Fatalf("search after reopen: %v", ids(res))
	}
}

type fakeEmbedder struct {
	name string
	dim  int
}

func (f fakeEmbedder) Name() string { return f.name }
func (f fakeEmbedder) Dim() int     { return f.dim }
func (f fakeEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, f.dim)
		for j := 0; j < len(t); j++ {
			v[int(t[j])%f.dim]++
		}
		out[i] = v
	}
	return out, nil
}

func TestOpen_NeedsRebuild(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		opts   Options
	}{
		{"embedder name", nil, Options{Embedder: fakeEmbedder{"other", builtinDim}}},
		{"embedder dim", nil, Options{Embedder: fakeEmbedder{BuiltinEmbedderName, 8}}},
		{"meta missing", func(t *testing.T, dir string) { rm(t, filepath.Join(dir, metaFile)) }, Options{}},
		{"meta garbage", func(t *testing.T, dir string) { write(t, filepath.Join(dir, metaFile), "{not json") }, Options{}},
		{"format 1 (bleve on disk)", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, metaFile), `{"format":1,"embedder":"`+BuiltinEmbedderName+`","dim":`+strconv.Itoa(builtinDim)+`,"gen":1}`)
		}, Options{}},
		{"log garbage", func(t *testing.T, dir string) { garbleDir(t, filepath.Join(dir, "docs-1.log")) }, Options{}},
		{"log middle overwritten", func(t *testing.T, dir string) { smash(t, filepath.Join(dir, "docs-1.log")) }, Options{}},
		{"log missing", func(t *testing.T, dir string) { rm(t, filepath.Join(dir, "docs-1.log")) }, Options{}},
		{"log truncated", func(t *testing.T, dir string) { truncate(t, filepath.Join(dir, "docs-1.log"), 7) }, Options{}},
		{"log flipped byte", func(t *testing.T, dir string) { flip(t, filepath.Join(dir, "docs-1.log"), 100) }, Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ix, err := Open(Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			mustIndex(t, ix, memDocs()...)
			if err := ix.Close(); err != nil {
				t.Fatal(err)
			}
			if tc.damage != nil {
				tc.damage(t, dir)
			}
			o := tc.opts
			o.Dir = dir
			ix, err = Open(o)
			if err == nil {
				_ = ix.Close()
			}
			if !errors.Is(err, ErrNeedsRebuild) {
				t.Fatalf("Open: %v, want ErrNeedsRebuild", err)
			}
			// The documented way out: wipe, open, rebuild.
			if err := Wipe(dir); err != nil {
				t.Fatal(err)
			}
			ix = openTest(t, o)
			err = ix.Rebuild(context.Background(), func(yield func(Doc) error) error {
				for _, d := range memDocs() {
					if err := yield(d); err != nil {
						return err
					}
				}
				return nil
			}, nil)
			if err != nil || ix.Count() != len(memDocs()) {
				t.Fatalf("rebuild: %v, count %d", err, ix.Count())
			}
		})
	}
}

func rm(t *testing.T, p string) {
	t.Helper()
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func truncate(t *testing.T, p string, cut int64) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, fi.Size()-cut); err != nil {
		t.Fatal(err)
	}
}

func flip(t *testing.T, p string, at int) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[at] ^= 0xff
	write(t, p, string(b))
}

// smash overwrites 32 bytes in the middle of p with random bytes.
func smash(t *testing.T, p string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	junk := make([]byte, 32)
	_, _ = rand.Read(junk)
	copy(b[len(b)/2:], junk)
	write(t, p, string(b))
}

// garbleDir overwrites every file under dir with junk.
func garbleDir(t *testing.T, dir string) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		return os.WriteFile(p, []byte(strings.Repeat("\xde\xad", 64)), 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}
