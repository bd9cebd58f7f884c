package memsearch

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	badgerdb "github.com/dgraph-io/badger/v4"
	"github.com/fiatjaf/eventstore/badger"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/search"
)

// ---- chunking ----

// ---- the plugin over a real store ----

// countingEmbedder counts the texts it embeds.
type countingEmbedder struct {
	search.Embedder
	mu    sync.Mutex
	texts []string
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	c.texts = append(c.texts, texts...)
	c.mu.Unlock()
	return c.Embedder.Embed(ctx, texts)
}

func (c *countingEmbedder) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.texts)
}

type filesEnv struct {
	ws, indexDir string
	store        *badger.BadgerBackend
	emb          *countingEmbedder
	agentSK      string
	agent, owner string
	other        string
}

func newFilesEnv(t *testing.T) *filesEnv {
	t.Helper()
	store := &badger.BadgerBackend{Path: t.TempDir(), BadgerOptionsModifier: func(o badgerdb.Options) badgerdb.Options {
		return o.WithLogger(nil)
	}}
	if err := store.Init(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	e := &filesEnv{ws: t.TempDir(), indexDir: t.TempDir(), store: store,
		emb: &countingEmbedder{Embedder: search.NewBuiltinEmbedder()}, agentSK: nostr.GeneratePrivateKey()}
	e.agent, _ = nostr.GetPublicKey(e.agentSK)
	e.owner, _ = nostr.GetPublicKey(nostr.GeneratePrivateKey())
	e.other, _ = nostr.GetPublicKey(nostr.GeneratePrivateKey())
	return e
}

// open opens the plugin; the relay's read rule lets everyone read every
// event, so whatever hides a file chunk is the plugin's own rule.
func (e *filesEnv) open(t *testing.T, paths []string, interval time.Duration) (*Plugin, error) {
	t.Helper()
	p, err := Open(context.Background(), Options{
		Search:        search.Options{Dir: e.indexDir, Embedder: e.emb},
		AgentPubkey:   e.agent,
		AgentSecret:   e.agentSK,
		OwnerPubkey:   e.owner,
		Store:         e.store,
		CanRead:       func(string, *nostr.Event) bool { return true },
		FilesDir:      e.ws,
		IndexedPaths:  paths,
		IndexInterval: interval,
	})
	if err == nil {
		t.Cleanup(func() { p.Close() })
	}
	return p, err
}

func (e *filesEnv) mustOpen(t *testing.T, paths ...string) *Plugin {
	t.Helper()
	p, err := e.open(t, paths, -1)
	if err != nil {
		t.Fatal(err)
	}
	return p
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

func find(t *testing.T, p *Plugin, reader string, f nostr.Filter) []*nostr.Event {
	t.Helper()
	sf, err := snowclaw.ReadFilter(f)
	if err != nil {
		t.Fatal(err)
	}
	evs, _, err := p.Query(context.Background(), reader, sf)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func findText(t *testing.T, p *Plugin, reader, q string) []*nostr.Event {
	t.Helper()
	return find(t, p, reader, nostr.Filter{Search: q})
}

// has tells whether the reader finds a chunk with the word. The vector
// list ranks every doc, so a search is never empty when there are docs:
// look at the contents.
func has(t *testing.T, p *Plugin, reader, word string) bool {
	t.Helper()
	for _, evt := range findText(t, p, reader, word) {
		if strings.Contains(evt.Content, word) {
			return true
		}
	}
	return false
}

func scan(t *testing.T, p *Plugin) FileScan {
	t.Helper()
	sum, err := p.ScanFiles(context.Background())
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

func TestFiles_SearchAndVisibility(t *testing.T) {
	e := newFilesEnv(t)
	e.write(t, "MEMORY.md", "# Memory\n\nThe staging database password rotates every Tuesday at the zebra standup.\n")
	mtime := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(e.ws, "MEMORY.md"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	p := e.mustOpen(t, "MEMORY.md")

	evs := findText(t, p, e.owner, "zebra standup")
	if len(evs) != 1 {
		t.Fatalf("owner found %d events, want 1", len(evs))
	}
	evt := evs[0]
	if ok, err := evt.CheckSignature(); !ok || err != nil {
		t.Fatalf("chunk event signature: %v %v", ok, err)
	}
	if evt.PubKey != e.agent || evt.Kind != snowclaw.KindAppData || int64(evt.CreatedAt) != mtime.Unix() {
		t.Fatalf("chunk event pubkey %s kind %d created_at %d", evt.PubKey, evt.Kind, evt.CreatedAt)
	}
	if d := evt.Tags.GetD(); d != "snowclaw:file:MEMORY.md#0" {
		t.Fatalf("d = %q", d)
	}
	if v := snowclaw.TagValues(evt, "snow:path"); !slices.Equal(v, []string{"MEMORY.md"}) {
		t.Fatalf("snow:path = %q", v)
	}
	if v := snowclaw.TagValues(evt, "snow:chunk"); !slices.Equal(v, []string{"0"}) {
		t.Fatalf("snow:chunk = %q", v)
	}
	if want := "# Memory\n\nThe staging database password rotates every Tuesday at the zebra standup."; evt.Content != want {
		t.Fatalf("content = %q, want %q", evt.Content, want)
	}
	if _, err := e.store.QueryEvents(context.Background(), nostr.Filter{IDs: []string{evt.ID}}); err != nil {
		t.Fatal(err)
	}
	if n := storedCount(t, e, evt.ID); n != 0 {
		t.Fatalf("the chunk event is in the store")
	}

	cases := []struct {
		name   string
		reader string
		filter nostr.Filter
		want   int
	}{
		{"owner", e.owner, nostr.Filter{Search: "zebra"}, 1},
		{"agent", e.agent, nostr.Filter{Search: "zebra"}, 1},
		{"another reader", e.other, nostr.Filter{Search: "zebra"}, 0},
		{"anonymous", "", nostr.Filter{Search: "zebra"}, 0},
		{"path words", e.owner, nostr.Filter{Search: "memory"}, 1},
		{"kinds 30078", e.owner, nostr.Filter{Search: "zebra", Kinds: []int{snowclaw.KindAppData}}, 1},
		{"kinds 1", e.owner, nostr.Filter{Search: "zebra", Kinds: []int{1}}, 0},
		{"authors agent", e.owner, nostr.Filter{Search: "zebra", Authors: []string{e.agent}}, 1},
		{"authors other", e.owner, nostr.Filter{Search: "zebra", Authors: []string{e.other}}, 0},
		{"#d", e.owner, nostr.Filter{Search: "zebra", Tags: nostr.TagMap{"d": {"snowclaw:file:MEMORY.md#0"}}}, 1},
		{"ids", e.owner, nostr.Filter{Search: "zebra", IDs: []string{evt.ID}}, 1},
		{"tier:private", e.owner, nostr.Filter{Search: "zebra tier:private"}, 1},
		{"tier:public", e.owner, nostr.Filter{Search: "zebra tier:public"}, 0},
		{"until before mtime", e.owner, nostr.Filter{Search: "zebra", Until: ptr(nostr.Timestamp(mtime.Unix() - 1))}, 0},
		{"since mtime", e.owner, nostr.Filter{Search: "zebra", Since: ptr(nostr.Timestamp(mtime.Unix()))}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := find(t, p, c.reader, c.filter); len(got) != c.want {
				t.Fatalf("%d events, want %d", len(got), c.want)
			}
		})
	}

	t.Run("stored events and chunks together", func(t *testing.T) {
		sk := nostr.GeneratePrivateKey()
		mem := nostr.Event{Kind: snowclaw.KindAppData, CreatedAt: nostr.Now(),
			Tags: nostr.Tags{{"d", "snow:memory:animals/zebra"}}, Content: "zebra standup notes live in the wiki"}
		if err := mem.Sign(sk); err != nil {
			t.Fatal(err)
		}
		if err := e.store.SaveEvent(context.Background(), &mem); err != nil {
			t.Fatal(err)
		}
		p.OnEventSaved(context.Background(), snowclaw.ReadEvent(&mem))
		if got := findText(t, p, e.owner, "zebra standup"); len(got) != 2 {
			t.Fatalf("owner: %d events, want the memory and the chunk", len(got))
		}
		got := findText(t, p, e.other, "zebra standup")
		if len(got) != 1 || got[0].ID != mem.ID {
			t.Fatalf("another reader: %d events, want the memory alone", len(got))
		}
	})

	t.Run("no owner configured", func(t *testing.T) {
		e2 := newFilesEnv(t)
		e2.owner = ""
		e2.write(t, "MEMORY.md", "zebra")
		p2 := e2.mustOpen(t, "MEMORY.md")
		if got := findText(t, p2, "", "zebra"); len(got) != 0 {
			t.Fatalf("anonymous reader found %d events", len(got))
		}
		if got := findText(t, p2, e2.agent, "zebra"); len(got) != 1 {
			t.Fatalf("agent found %d events", len(got))
		}
	})
}

func ptr[T any](v T) *T { return &v }

func storedCount(t *testing.T, e *filesEnv, id string) int {
	t.Helper()
	ch, err := e.store.QueryEvents(context.Background(), nostr.Filter{IDs: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for range ch {
		n++
	}
	return n
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
		do        func(t *testing.T, e *filesEnv, p *Plugin)
		scan      FileScan // the fields checked: Indexed, Unchanged, Removed
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
				do: func(t *testing.T, e *filesEnv, p *Plugin) {
					e.write(t, "rooms/general.md", "We picked the narwhal logo instead.")
				},
				scan: FileScan{Indexed: 1, Unchanged: 1}, embedded: 1,
				found: []string{"narwhal", "nightly"}, notFound: []string{"okapi"},
			}},
		},
		{
			name:  "deleted file loses its chunks",
			files: map[string]string{"rooms/general.md": "The okapi is our mascot.", "MEMORY.md": "Remember the quokka."},
			paths: []string{"rooms/*.md", "MEMORY.md"},
			steps: []step{{
				do: func(t *testing.T, e *filesEnv, p *Plugin) {
					if err := os.Remove(filepath.Join(e.ws, "rooms", "general.md")); err != nil {
						t.Fatal(err)
					}
				},
				scan: FileScan{Removed: 1, Unchanged: 1}, embedded: 0, docsDelta: -1,
				found: []string{"quokka"}, notFound: []string{"okapi"},
			}},
		},
		{
			name:  "unchanged and touched files are not embedded again",
			files: map[string]string{"MEMORY.md": "Remember the quokka.", "docs/a.md": big("tail of a")},
			paths: []string{"MEMORY.md", "docs/**/*.md"},
			steps: []step{
				{do: func(*testing.T, *filesEnv, *Plugin) {}, scan: FileScan{Unchanged: 2}, embedded: 0,
					found: []string{"quokka", "p0w5"}, docsDelta: 0},
				{do: func(t *testing.T, e *filesEnv, p *Plugin) {
					later := time.Now().Add(time.Hour)
					if err := os.Chtimes(filepath.Join(e.ws, "MEMORY.md"), later, later); err != nil {
						t.Fatal(err)
					}
				}, scan: FileScan{Unchanged: 2}, embedded: 0, found: []string{"quokka"}, docsDelta: 0},
			},
		},
		{
			name:  "a changed file embeds only its changed chunks",
			files: map[string]string{"docs/a.md": big("the aardvark ends it")},
			paths: []string{"docs/**/*.md"},
			steps: []step{{
				do: func(t *testing.T, e *filesEnv, p *Plugin) {
					e.write(t, "docs/a.md", big("the pangolin ends it"))
				},
				scan: FileScan{Indexed: 1}, embedded: 1, docsDelta: 0,
				found: []string{"pangolin", "p0w5"}, notFound: []string{"aardvark"},
			}},
		},
		{
			name:  "a shorter version drops the extra chunks",
			files: map[string]string{"docs/a.md": big("the aardvark ends it")},
			paths: []string{"docs/**/*.md"},
			steps: []step{{
				do: func(t *testing.T, e *filesEnv, p *Plugin) {
					e.write(t, "docs/a.md", "Only the pangolin is left.")
				},
				scan: FileScan{Indexed: 1}, embedded: 1, docsDelta: -2,
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
				do: func(*testing.T, *filesEnv, *Plugin) {}, scan: FileScan{Unchanged: 2}, embedded: 0, docsDelta: 0,
				found: []string{"ibex", "tapir"}, notFound: []string{"gecko", "lemur", "yak"},
			}},
		},
		{
			name:  "new files are picked up",
			files: map[string]string{"rooms/a.md": "The ibex file."},
			paths: []string{"rooms/*.md"},
			steps: []step{{
				do:   func(t *testing.T, e *filesEnv, p *Plugin) { e.write(t, "rooms/b.md", "The tapir file.") },
				scan: FileScan{Indexed: 1, Unchanged: 1}, embedded: 1, docsDelta: 1,
				found: []string{"ibex", "tapir"},
			}},
		},
		{
			name:  "binary files are left out, empty ones hold no chunk",
			files: map[string]string{"a.md": "The ibex file.", "b.md": "bin\x00ary tapir", "c.md": "  \n"},
			paths: []string{"*.md"},
			steps: []step{{
				do: func(*testing.T, *filesEnv, *Plugin) {}, scan: FileScan{Unchanged: 2}, embedded: 0, docsDelta: 0,
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
			p := e.mustOpen(t, c.paths...)
			if e.emb.count() == 0 {
				t.Fatal("nothing embedded at Open")
			}
			for i, s := range c.steps {
				s.do(t, e, p)
				before, docs := e.emb.count(), p.Count()
				sum := scan(t, p)
				if sum.Indexed != s.scan.Indexed || sum.Unchanged != s.scan.Unchanged || sum.Removed != s.scan.Removed {
					t.Fatalf("step %d: scan %+v, want indexed %d unchanged %d removed %d", i, sum, s.scan.Indexed, s.scan.Unchanged, s.scan.Removed)
				}
				if n := e.emb.count() - before; (s.embedded >= 0 && n != s.embedded) || (s.embedded < 0 && n == 0) {
					t.Fatalf("step %d: %d texts embedded, want %d", i, n, s.embedded)
				}
				if d := p.Count() - docs; s.docsDelta != -99 && d != s.docsDelta {
					t.Fatalf("step %d: doc count changed by %d, want %d", i, d, s.docsDelta)
				}
				for _, w := range s.found {
					if !has(t, p, e.owner, w) {
						t.Fatalf("step %d: %q not found", i, w)
					}
					if got := findText(t, p, e.other, w); len(got) != 0 {
						t.Fatalf("step %d: another reader found %d chunks", i, len(got))
					}
				}
				for _, w := range s.notFound {
					if has(t, p, e.owner, w) {
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
	p := e.mustOpen(t, "MEMORY.md", "rooms/*.md", "notes/*.txt")
	docs := p.Count()
	if docs != 3 {
		t.Fatalf("%d docs, want 3", docs)
	}
	p.Close()

	t.Run("nothing embedded again after a restart", func(t *testing.T) {
		before := e.emb.count()
		p := e.mustOpen(t, "MEMORY.md", "rooms/*.md", "notes/*.txt")
		defer p.Close()
		if n := e.emb.count() - before; n != 0 {
			t.Fatalf("%d texts embedded at reopen", n)
		}
		if !has(t, p, e.owner, "quokka") {
			t.Fatal("quokka not found after reopen")
		}
	})
	t.Run("deleted while down, and no longer matching", func(t *testing.T) {
		if err := os.Remove(filepath.Join(e.ws, "rooms", "a.md")); err != nil {
			t.Fatal(err)
		}
		p := e.mustOpen(t, "MEMORY.md", "rooms/*.md") // notes/*.txt dropped
		defer p.Close()
		if p.Count() != 1 {
			t.Fatalf("%d docs, want 1", p.Count())
		}
		for _, w := range []string{"okapi", "tapir"} {
			if has(t, p, e.owner, w) {
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
		before := e.emb.count()
		p := e.mustOpen(t, "MEMORY.md", "rooms/*.md")
		defer p.Close()
		if n := e.emb.count() - before; n != 0 {
			t.Fatalf("%d texts embedded", n)
		}
		if !has(t, p, e.owner, "quokka") {
			t.Fatal("quokka not found")
		}
	})
	t.Run("interrupted re-index is finished", func(t *testing.T) {
		// a crash after indexing the new version of a file but before the
		// manifest recorded it: the new chunk is pending, the old one current
		p := e.mustOpen(t, "MEMORY.md", "rooms/*.md")
		old := p.files.man.Files["MEMORY.md"]
		e.write(t, "MEMORY.md", "Remember the wombat.")
		u, _, err := p.prepareFile("MEMORY.md")
		if err != nil {
			t.Fatal(err)
		}
		p.files.man.Pending["MEMORY.md"] = []string{u.entry.Chunks[0].ID}
		if err := p.saveManifest(); err != nil {
			t.Fatal(err)
		}
		if err := p.ix.Index(context.Background(), u.docs...); err != nil {
			t.Fatal(err)
		}
		if has(t, p, e.owner, "wombat") {
			t.Fatal("a pending chunk was served")
		}
		p.Close()
		p = e.mustOpen(t, "MEMORY.md", "rooms/*.md")
		defer p.Close()
		if !has(t, p, e.owner, "wombat") {
			t.Fatal("wombat not found")
		}
		if has(t, p, e.owner, "quokka") {
			t.Fatal("the old version is still found")
		}
		if _, ok := p.ix.Meta(old.Chunks[0].ID); ok {
			t.Fatal("the old chunk is still indexed")
		}
		if p.Count() != 1 {
			t.Fatalf("%d docs, want 1", p.Count())
		}
	})
}

func TestFiles_Periodic(t *testing.T) {
	e := newFilesEnv(t)
	e.write(t, "rooms/a.md", "The okapi room.")
	p, err := e.open(t, []string{"rooms/*.md"}, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	e.write(t, "rooms/b.md", "The tapir room.")
	if err := os.Remove(filepath.Join(e.ws, "rooms", "a.md")); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the periodic scan to pick up the changes", func() bool {
		return has(t, p, e.owner, "tapir") && !has(t, p, e.owner, "okapi")
	})
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestFiles_Off(t *testing.T) {
	e := newFilesEnv(t)
	e.write(t, "MEMORY.md", "Remember the quokka.")
	p := e.mustOpen(t) // no indexed paths
	if p.Count() != 0 {
		t.Fatalf("%d docs indexed with file indexing off", p.Count())
	}
	if sum, err := p.ScanFiles(context.Background()); err != nil || sum != (FileScan{}) {
		t.Fatalf("ScanFiles = %+v, %v", sum, err)
	}
	if _, err := os.Stat(filepath.Join(e.indexDir, manifestName)); !os.IsNotExist(err) {
		t.Fatalf("manifest written with file indexing off: %v", err)
	}
}
