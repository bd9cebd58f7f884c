package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiatjaf/eventstore"
	"github.com/fiatjaf/eventstore/slicestore"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/search"
)

// filesEnv is a workspace over a real search index, answered as the
// index's owner (memsearch.Query) answers a reader: ranked within the
// scopes the reader may read, each hit loaded through the Store overlay
// and checked by ReadRule. The relay's own rule lets everyone read every
// event, so whatever hides a file chunk is the workspace's rule.
type filesEnv struct {
	ws, indexDir string
	agentSK      string
	agent, owner string
	other        string
	embedded     atomic.Int64 // docs handed to the index to embed, over every open
	ix           *search.Index
	store        eventstore.Store
}

func newFilesEnv(t *testing.T) *filesEnv {
	t.Helper()
	e := &filesEnv{ws: t.TempDir(), indexDir: t.TempDir(), agentSK: nostr.GeneratePrivateKey(), store: &slicestore.SliceStore{}}
	if err := e.store.Init(); err != nil {
		t.Fatal(err)
	}
	e.agent, _ = nostr.GetPublicKey(e.agentSK)
	e.owner, _ = nostr.GetPublicKey(nostr.GeneratePrivateKey())
	e.other, _ = nostr.GetPublicKey(nostr.GeneratePrivateKey())
	return e
}

// countingIndex is the real index, counting the docs the workspace asks it
// to embed.
type countingIndex struct {
	*searchIndex
	e *filesEnv
}

type searchIndex = search.Index

func (c countingIndex) Index(ctx context.Context, docs ...search.Doc) error {
	c.e.embedded.Add(int64(len(docs)))
	return c.searchIndex.Index(ctx, docs...)
}

// options are the files' options over the env's directories and keys.
func (e *filesEnv) options(interval time.Duration, paths ...string) Options {
	return Options{Dir: e.ws, Paths: paths, Interval: interval, OwnerPubkey: e.owner, AgentSecret: e.agentSK, IndexDir: e.indexDir}
}

// open opens the index in indexDir and starts the workspace files over it,
// as the index's owner does when it opens.
func (e *filesEnv) open(t *testing.T, o Options) *Files {
	t.Helper()
	f, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := search.Open(search.Options{Dir: e.indexDir, Embedder: search.NewBuiltinEmbedder()})
	if err != nil {
		t.Fatal(err)
	}
	e.ix = ix
	f.Start(context.Background(), countingIndex{searchIndex: ix, e: e})
	t.Cleanup(func() { closeFiles(f, ix) })
	return f
}

// embeds is how many docs the index was asked to embed so far.
func (e *filesEnv) embeds() int { return int(e.embedded.Load()) }

// mustOpen opens the files with no periodic scan.
func (e *filesEnv) mustOpen(t *testing.T, paths ...string) *Files {
	t.Helper()
	return e.open(t, e.options(-1, paths...))
}

// closeFiles stops the files and closes their index, as the index's owner
// does when it closes.
func closeFiles(f *Files, ix *search.Index) error {
	f.Stop()
	return ix.Close()
}

func (e *filesEnv) write(t *testing.T, rel, text string) {
	t.Helper()
	full := filepath.Join(e.ws, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// findText is what reader's search for q returns. Every event served must
// be signed by the agent.
func (e *filesEnv) findText(t *testing.T, f *Files, reader, q string) []*nostr.Event {
	t.Helper()
	ctx := context.Background()
	rule := f.ReadRule(func(string, *nostr.Event) bool { return true })
	res, err := e.ix.Search(ctx, search.Query{
		Text:     q,
		Limit:    search.DefaultLimit,
		Readable: func(scope string) bool { return scope == Scope && f.CanRead(reader) },
		Accept:   func(d search.Doc) bool { return rule(reader, eventOf(d)) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) == 0 {
		return nil
	}
	ids := make([]string, len(res))
	for i, r := range res {
		ids[i] = r.Doc.ID
	}
	ch, err := f.Store(e.store).QueryEvents(ctx, nostr.Filter{IDs: ids, Limit: len(ids)})
	if err != nil {
		t.Fatal(err)
	}
	var out []*nostr.Event
	for evt := range ch {
		if ok, err := evt.CheckSignature(); !ok || err != nil || evt.PubKey != e.agent {
			t.Fatalf("served chunk %s: signature %v %v, author %s", evt.ID, ok, err, evt.PubKey)
		}
		if rule(reader, evt) {
			out = append(out, evt)
		}
	}
	return out
}

// eventOf is the event the index's owner makes of a doc to ask the read
// rule.
func eventOf(d search.Doc) *nostr.Event {
	evt := &nostr.Event{ID: d.ID, Kind: d.Kind, PubKey: d.Pubkey, CreatedAt: nostr.Timestamp(d.CreatedAt)}
	for k, vs := range d.Tags {
		for _, v := range vs {
			evt.Tags = append(evt.Tags, nostr.Tag{k, v})
		}
	}
	return evt
}

// has tells whether the reader finds a chunk with the word. The vector
// list ranks every doc, so a search is never empty when there are docs:
// look at the contents.
func (e *filesEnv) has(t *testing.T, f *Files, reader, word string) bool {
	t.Helper()
	for _, evt := range e.findText(t, f, reader, word) {
		if strings.Contains(evt.Content, word) {
			return true
		}
	}
	return false
}

func scan(t *testing.T, f *Files) Scan {
	t.Helper()
	sum, err := f.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// filler makes n distinct words, so chunk texts differ.
func filler(prefix string, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return strings.Join(ws, " ")
}

func TestFiles_Reindex(t *testing.T) {
	big := func(last string) string { // three chunks; only the last paragraph varies
		var b strings.Builder
		for i := range 8 {
			fmt.Fprintf(&b, "%s.\n\n", filler(fmt.Sprintf("p%dw", i), 99))
		}
		b.WriteString(last + "\n")
		return b.String()
	}
	type step struct {
		do        func(t *testing.T, e *filesEnv, f *Files)
		scan      Scan     // the fields checked: Indexed, Unchanged, Removed
		embedded  int      // texts embedded by the scan; -1: more than 0
		found     []string // words the owner finds
		notFound  []string // words the owner does not find
		docsDelta int      // change of the doc count; -99: not checked
	}
	cases := []struct {
		name  string
		files map[string]string
		paths []string
		steps []step
	}{
		{
			name:  "modified file is re-indexed",
			files: map[string]string{"rooms/general.md": "We picked the okapi logo.", "rooms/dev.md": "Builds run nightly."},
			paths: []string{"rooms/*.md"},
			steps: []step{{
				do: func(t *testing.T, e *filesEnv, f *Files) {
					e.write(t, "rooms/general.md", "We picked the narwhal logo instead.")
				},
				scan: Scan{Indexed: 1, Unchanged: 1}, embedded: 1,
				found: []string{"narwhal", "nightly"}, notFound: []string{"okapi"},
			}},
		},
		{
			name:  "deleted file loses its chunks",
			files: map[string]string{"rooms/general.md": "The okapi is our mascot.", "MEMORY.md": "Remember the quokka."},
			paths: []string{"rooms/*.md", "MEMORY.md"},
			steps: []step{{
				do: func(t *testing.T, e *filesEnv, f *Files) {
					if err := os.Remove(filepath.Join(e.ws, "rooms", "general.md")); err != nil {
						t.Fatal(err)
					}
				},
				scan: Scan{Removed: 1, Unchanged: 1}, embedded: 0, docsDelta: -1,
				found: []string{"quokka"}, notFound: []string{"okapi"},
			}},
		},
		{
			name:  "unchanged and touched files are not embedded again",
			files: map[string]string{"MEMORY.md": "Remember the quokka.", "docs/a.md": big("tail of a")},
			paths: []string{"MEMORY.md", "docs/**/*.md"},
			steps: []step{
				{do: func(*testing.T, *filesEnv, *Files) {}, scan: Scan{Unchanged: 2}, embedded: 0,
					found: []string{"quokka", "p0w5"}, docsDelta: 0},
				{do: func(t *testing.T, e *filesEnv, f *Files) {
					later := time.Now().Add(time.Hour)
					if err := os.Chtimes(filepath.Join(e.ws, "MEMORY.md"), later, later); err != nil {
						t.Fatal(err)
					}
				}, scan: Scan{Unchanged: 2}, embedded: 0, found: []string{"quokka"}, docsDelta: 0},
			},
		},
		{
			name:  "a changed file embeds only its changed chunks",
			files: map[string]string{"docs/a.md": big("the aardvark ends it")},
			paths: []string{"docs/**/*.md"},
			steps: []step{{
				do: func(t *testing.T, e *filesEnv, f *Files) {
					e.write(t, "docs/a.md", big("the pangolin ends it"))
				},
				scan: Scan{Indexed: 1}, embedded: 1, docsDelta: 0,
				found: []string{"pangolin", "p0w5"}, notFound: []string{"aardvark"},
			}},
		},
		{
			name:  "a shorter version drops the extra chunks",
			files: map[string]string{"docs/a.md": big("the aardvark ends it")},
			paths: []string{"docs/**/*.md"},
			steps: []step{{
				do: func(t *testing.T, e *filesEnv, f *Files) {
					e.write(t, "docs/a.md", "Only the pangolin is left.")
				},
				scan: Scan{Indexed: 1}, embedded: 1, docsDelta: -2,
				found: []string{"pangolin"}, notFound: []string{"aardvark", "p0w5", "p7w5"},
			}},
		},
		{
			name: "glob with ** reaches every depth and nothing else",
			files: map[string]string{
				"docs/top.md": "The ibex file.", "docs/x/y/deep.md": "The tapir file.",
				"docs/x/notes.txt": "The gecko file.", "other.md": "The lemur file.", "docs/.git/hidden.md": "The yak file.",
			},
			paths: []string{"docs/**/*.md"},
			steps: []step{{
				do: func(*testing.T, *filesEnv, *Files) {}, scan: Scan{Unchanged: 2}, embedded: 0, docsDelta: 0,
				found: []string{"ibex", "tapir"}, notFound: []string{"gecko", "lemur", "yak"},
			}},
		},
		{
			name:  "new files are picked up",
			files: map[string]string{"rooms/a.md": "The ibex file."},
			paths: []string{"rooms/*.md"},
			steps: []step{{
				do:   func(t *testing.T, e *filesEnv, f *Files) { e.write(t, "rooms/b.md", "The tapir file.") },
				scan: Scan{Indexed: 1, Unchanged: 1}, embedded: 1, docsDelta: 1,
				found: []string{"ibex", "tapir"},
			}},
		},
		{
			name:  "binary files are left out, empty ones hold no chunk",
			files: map[string]string{"a.md": "The ibex file.", "b.md": "bin\x00ary tapir", "c.md": "  \n"},
			paths: []string{"*.md"},
			steps: []step{{
				do: func(*testing.T, *filesEnv, *Files) {}, scan: Scan{Unchanged: 2}, embedded: 0, docsDelta: 0,
				found: []string{"ibex"}, notFound: []string{"tapir"},
			}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newFilesEnv(t)
			for rel, text := range c.files {
				e.write(t, rel, text)
			}
			f := e.mustOpen(t, c.paths...)
			if e.embeds() == 0 {
				t.Fatal("nothing embedded at Open")
			}
			for i, s := range c.steps {
				s.do(t, e, f)
				before, docs := e.embeds(), e.ix.Count()
				sum := scan(t, f)
				if sum.Indexed != s.scan.Indexed || sum.Unchanged != s.scan.Unchanged || sum.Removed != s.scan.Removed {
					t.Fatalf("step %d: scan %+v, want indexed %d unchanged %d removed %d", i, sum, s.scan.Indexed, s.scan.Unchanged, s.scan.Removed)
				}
				if n := e.embeds() - before; (s.embedded >= 0 && n != s.embedded) || (s.embedded < 0 && n == 0) {
					t.Fatalf("step %d: %d texts embedded, want %d", i, n, s.embedded)
				}
				if d := e.ix.Count() - docs; s.docsDelta != -99 && d != s.docsDelta {
					t.Fatalf("step %d: doc count changed by %d, want %d", i, d, s.docsDelta)
				}
				for _, w := range s.found {
					if !e.has(t, f, e.owner, w) {
						t.Fatalf("step %d: %q not found", i, w)
					}
					if got := e.findText(t, f, e.other, w); len(got) != 0 {
						t.Fatalf("step %d: another reader found %d chunks", i, len(got))
					}
				}
				for _, w := range s.notFound {
					if e.has(t, f, e.owner, w) {
						t.Fatalf("step %d: %q still found", i, w)
					}
				}
			}
		})
	}
}

func TestFiles_Restart(t *testing.T) {
	e := newFilesEnv(t)
	e.write(t, "MEMORY.md", "Remember the quokka.")
	e.write(t, "rooms/a.md", "The okapi room.")
	e.write(t, "notes/b.txt", "The tapir note.")
	f := e.mustOpen(t, "MEMORY.md", "rooms/*.md", "notes/*.txt")
	docs := e.ix.Count()
	if docs != 3 {
		t.Fatalf("%d docs, want 3", docs)
	}
	closeFiles(f, e.ix)

	t.Run("nothing embedded again after a restart", func(t *testing.T) {
		before := e.embeds()
		f := e.mustOpen(t, "MEMORY.md", "rooms/*.md", "notes/*.txt")
		defer closeFiles(f, e.ix)
		if n := e.embeds() - before; n != 0 {
			t.Fatalf("%d texts embedded at reopen", n)
		}
		if !e.has(t, f, e.owner, "quokka") {
			t.Fatal("quokka not found after reopen")
		}
	})
	t.Run("deleted while down, and no longer matching", func(t *testing.T) {
		if err := os.Remove(filepath.Join(e.ws, "rooms", "a.md")); err != nil {
			t.Fatal(err)
		}
		f := e.mustOpen(t, "MEMORY.md", "rooms/*.md") // notes/*.txt dropped
		defer closeFiles(f, e.ix)
		if e.ix.Count() != 1 {
			t.Fatalf("%d docs, want 1", e.ix.Count())
		}
		for _, w := range []string{"okapi", "tapir"} {
			if e.has(t, f, e.owner, w) {
				t.Fatalf("%q still found", w)
			}
		}
		var m manifest
		b, err := os.ReadFile(filepath.Join(e.indexDir, manifestName))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if len(m.Files) != 1 || m.Files["MEMORY.md"] == nil || len(m.Pending) != 0 {
			t.Fatalf("manifest %+v, want MEMORY.md alone", m)
		}
	})
	t.Run("corrupt manifest: chunks reused, nothing lost", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(e.indexDir, manifestName), []byte("{nope"), 0o600); err != nil {
			t.Fatal(err)
		}
		before := e.embeds()
		f := e.mustOpen(t, "MEMORY.md", "rooms/*.md")
		defer closeFiles(f, e.ix)
		if n := e.embeds() - before; n != 0 {
			t.Fatalf("%d texts embedded", n)
		}
		if !e.has(t, f, e.owner, "quokka") {
			t.Fatal("quokka not found")
		}
	})
	t.Run("interrupted re-index is finished", func(t *testing.T) {
		// a crash after indexing the new version of a file but before the
		// manifest recorded it: the new chunk is pending, the old one current
		f := e.mustOpen(t, "MEMORY.md", "rooms/*.md")
		old := f.man.Files["MEMORY.md"]
		e.write(t, "MEMORY.md", "Remember the wombat.")
		u, _, err := f.prepareFile("MEMORY.md")
		if err != nil {
			t.Fatal(err)
		}
		f.man.Pending["MEMORY.md"] = []string{u.entry.Chunks[0].ID}
		if err := f.saveManifest(); err != nil {
			t.Fatal(err)
		}
		if err := e.ix.Index(context.Background(), u.docs...); err != nil {
			t.Fatal(err)
		}
		if e.has(t, f, e.owner, "wombat") {
			t.Fatal("a pending chunk was served")
		}
		closeFiles(f, e.ix)
		f = e.mustOpen(t, "MEMORY.md", "rooms/*.md")
		defer closeFiles(f, e.ix)
		if !e.has(t, f, e.owner, "wombat") {
			t.Fatal("wombat not found")
		}
		if e.has(t, f, e.owner, "quokka") {
			t.Fatal("the old version is still found")
		}
		if _, ok := e.ix.Meta(old.Chunks[0].ID); ok {
			t.Fatal("the old chunk is still indexed")
		}
		if e.ix.Count() != 1 {
			t.Fatalf("%d docs, want 1", e.ix.Count())
		}
	})
}

func TestFiles_Periodic(t *testing.T) {
	e := newFilesEnv(t)
	e.write(t, "rooms/a.md", "The okapi room.")
	f := e.open(t, e.options(20*time.Millisecond, "rooms/*.md"))
	e.write(t, "rooms/b.md", "The tapir room.")
	if err := os.Remove(filepath.Join(e.ws, "rooms", "a.md")); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the periodic scan to pick up the changes", func() bool {
		return e.has(t, f, e.owner, "tapir") && !e.has(t, f, e.owner, "okapi")
	})
	if err := closeFiles(f, e.ix); err != nil {
		t.Fatal(err)
	}
}
