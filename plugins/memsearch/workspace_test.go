package memsearch

import (
	"context"
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
	"github.com/snowclaw/snowclaw/plugins/workspace"
	"github.com/snowclaw/snowclaw/search"
)

// Workspace files as the plugin composes them (plugins/workspace): Query
// serves their chunks under the read rule beside stored events, over a
// real store. The files' own behaviour (chunking, globs, re-indexing, the
// manifest) is tested in plugins/workspace.

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

// write puts a file at the top of the workspace.
func (e *filesEnv) write(t *testing.T, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(e.ws, name), []byte(text), 0o644); err != nil {
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

func TestWorkspace_SearchAndVisibility(t *testing.T) {
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

// TestWorkspace_RestartEmbedsNothing: the plugin's reopen keeps the
// chunks its index and the manifest hold, so no file is embedded again.
func TestWorkspace_RestartEmbedsNothing(t *testing.T) {
	e := newFilesEnv(t)
	e.write(t, "MEMORY.md", "Remember the quokka.")
	e.write(t, "notes.md", "The okapi room.")
	p := e.mustOpen(t, "MEMORY.md", "notes.md")
	if p.Count() != 2 {
		t.Fatalf("%d docs, want 2", p.Count())
	}
	p.Close()
	before := e.emb.count()
	p = e.mustOpen(t, "MEMORY.md", "notes.md")
	if n := e.emb.count() - before; n != 0 {
		t.Fatalf("%d texts embedded at reopen", n)
	}
	for _, w := range []string{"quokka", "okapi"} {
		if got := findText(t, p, e.owner, w); len(got) == 0 || !strings.Contains(got[0].Content, w) {
			t.Fatalf("%q is not found first after reopen", w)
		}
	}
}

// TestWorkspace_BadPathsRefusedAtOpen: what the workspace files refuse
// (plugins/workspace TestFiles_BadGlob) stops Open.
func TestWorkspace_BadPathsRefusedAtOpen(t *testing.T) {
	e := newFilesEnv(t)
	if _, err := e.open(t, []string{"MEMORY.md", "../secret.md"}, -1); err == nil || !strings.Contains(err.Error(), "indexed_paths") {
		t.Fatalf("err = %v, want an indexed_paths error", err)
	}
}

func TestWorkspace_Off(t *testing.T) {
	e := newFilesEnv(t)
	e.write(t, "MEMORY.md", "Remember the quokka.")
	p := e.mustOpen(t) // no indexed paths
	if p.Count() != 0 {
		t.Fatalf("%d docs indexed with file indexing off", p.Count())
	}
	if sum, err := p.ScanFiles(context.Background()); err != nil || sum != (workspace.Scan{}) {
		t.Fatalf("ScanFiles = %+v, %v", sum, err)
	}
	if _, err := os.Stat(filepath.Join(e.indexDir, "files.json")); !os.IsNotExist(err) {
		t.Fatalf("manifest written with file indexing off: %v", err)
	}
}
