package workspace

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestFiles_Glob(t *testing.T) {
	cases := []struct {
		pattern, path string
		want          bool
	}{
		{"rooms/*.md", "rooms/general.md", true},
		{"rooms/*.md", "rooms/sub/general.md", false},
		{"rooms/*.md", "general.md", false},
		{"rooms/*.md", "rooms/general.txt", false},
		{"MEMORY.md", "MEMORY.md", true},
		{"MEMORY.md", "x/MEMORY.md", false},
		{"./MEMORY.md", "MEMORY.md", true},
		{"docs/**/*.md", "docs/a.md", true},
		{"docs/**/*.md", "docs/x/a.md", true},
		{"docs/**/*.md", "docs/x/y/z/a.md", true},
		{"docs/**/*.md", "docs/x/a.txt", false},
		{"docs/**/*.md", "other/docs/a.md", false},
		{"docs/**/*.md", "docs/.git/a.md", false},
		{"docs/**/*.md", "docs/.hidden.md", false},
		{"docs/**/notes/*.md", "docs/notes/a.md", true},
		{"docs/**/notes/*.md", "docs/a/b/notes/a.md", true},
		{"docs/**/notes/*.md", "docs/a/b/a.md", false},
		{"**/*.md", "a.md", true},
		{"**/*.md", "x/y/z.md", true},
		{"**/*.md", ".git/z.md", false},
		{"docs/**", "docs/a/b/c.txt", true},
		{"docs/**", "docs/c.txt", true},
		{"docs/**", "doc/c.txt", false},
		{".notes/*.md", ".notes/a.md", true},
		{"rooms/[a-c]*.md", "rooms/bravo.md", true},
		{"rooms/[a-c]*.md", "rooms/delta.md", false},
	}
	for _, c := range cases {
		t.Run(c.pattern+" "+c.path, func(t *testing.T) {
			g, err := compileGlob(c.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if got := g.match(strings.Split(c.path, "/")); got != c.want {
				t.Fatalf("match = %v, want %v", got, c.want)
			}
		})
	}

	// directories the walk may skip
	dirs := []struct {
		pattern, dir string
		want         bool
	}{
		{"rooms/*.md", "rooms", true},
		{"rooms/*.md", "docs", false},
		{"rooms/*.md", "rooms/sub", false},
		{"MEMORY.md", "anything", false},
		{"docs/**/*.md", "docs/a/b", true},
		{"docs/**/*.md", "x", false},
		{"**/*.md", "deep/er", true},
		{"**/*.md", ".git", false},
		{".notes/*.md", ".notes", true},
	}
	for _, c := range dirs {
		t.Run("dir "+c.pattern+" "+c.dir, func(t *testing.T) {
			g, _ := compileGlob(c.pattern)
			if got := g.couldContain(strings.Split(c.dir, "/")); got != c.want {
				t.Fatalf("couldContain = %v, want %v", got, c.want)
			}
		})
	}
}

func TestFiles_BadGlob(t *testing.T) {
	cases := []struct{ pattern, want string }{
		{"rooms/[.md", "syntax error in pattern"},
		{"rooms/\\", "syntax error in pattern"},
		{"/etc/*.conf", "relative to the workspace"},
		{"../secret.md", "must not leave the workspace"},
		{"docs/../../x.md", "must not leave the workspace"},
		{"docs/**.md", "whole path segment"},
		{"  ", "empty pattern"},
		{".", "names no file"},
	}
	for _, c := range cases {
		t.Run(c.pattern, func(t *testing.T) {
			env := newFilesEnv(t)
			_, err := New(env.options(-1, "MEMORY.md", c.pattern))
			if err == nil {
				t.Fatalf("New accepted indexed path %q", c.pattern)
			}
			if !strings.Contains(err.Error(), "indexed_paths") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q: want indexed_paths and %q", err, c.want)
			}
		})
	}
	t.Run("missing workspace directory", func(t *testing.T) {
		env := newFilesEnv(t)
		env.ws = filepath.Join(env.ws, "nope")
		if _, err := New(env.options(-1, "*.md")); err == nil || !strings.Contains(err.Error(), "workspace directory") {
			t.Fatalf("err = %v, want a workspace directory error", err)
		}
	})
	t.Run("no agent key", func(t *testing.T) {
		env := newFilesEnv(t)
		env.agentSK = ""
		if _, err := New(env.options(-1, "*.md")); err == nil || !strings.Contains(err.Error(), "agent key") {
			t.Fatalf("err = %v, want an agent key error", err)
		}
	})
}
