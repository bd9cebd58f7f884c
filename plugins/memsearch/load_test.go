package memsearch

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/search"
)

// loadEnv is a plugin over a real badger store, with an embedder that
// counts what it embeds (how many times a doc was indexed).
type loadEnv struct {
	*filesEnv
	author string // secret key of the memories' author
}

func newLoadEnv(t *testing.T) *loadEnv {
	return &loadEnv{filesEnv: newFilesEnv(t), author: nostr.GeneratePrivateKey()}
}

// save stores a public memory and returns it, as the relay's write path
// would before its hooks run.
func (e *loadEnv) save(t *testing.T, topic, summary string) *nostr.Event {
	t.Helper()
	evt := &nostr.Event{Kind: 30078, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"d", "snow:memory:" + topic}},
		Content: fmt.Sprintf(`{"summary":%q}`, summary)}
	if err := evt.Sign(e.author); err != nil {
		t.Fatal(err)
	}
	if err := e.store.SaveEvent(context.Background(), evt); err != nil {
		t.Fatal(err)
	}
	return evt
}

func (e *loadEnv) options(progress func(done, total int)) Options {
	return Options{
		Search:      search.Options{Dir: filepath.Join(e.indexDir, "index"), Embedder: e.emb},
		AgentPubkey: e.agent, AgentSecret: e.agentSK, OwnerPubkey: e.owner,
		Store:    e.store,
		CanRead:  func(string, *nostr.Event) bool { return true },
		Progress: progress,
	}
}

// embedded counts the texts embedded so far that hold word.
func (e *loadEnv) embedded(word string) int {
	e.emb.mu.Lock()
	defer e.emb.mu.Unlock()
	n := 0
	for _, t := range e.emb.texts {
		if strings.Contains(t, word) {
			n++
		}
	}
	return n
}

// Updates that reach the plugin while its index is being built from the
// store are held, then applied after the build in their order: an event
// the build found in the store is not indexed a second time, and an
// event deleted meanwhile leaves the index.
func TestLoad_UpdatesDuringTheBuildAreAppliedOnce(t *testing.T) {
	e := newLoadEnv(t)
	for i := range 1200 { // more than one batch of the build (500)
		e.save(t, fmt.Sprintf("ops/host%d", i), fmt.Sprintf("host %d runs the nightly backup", i))
	}
	// both are in the store before the build walks it, and their hooks
	// run while it does
	saved := e.save(t, "ops/quokka", "the quokka rotates the lighthouse credentials")
	deleted := e.save(t, "ops/walrus", "the walrus guards the spare keys")

	entered, held := make(chan struct{}), make(chan struct{})
	var once sync.Once
	p, err := Start(e.options(func(done, total int) {
		once.Do(func() { close(entered); <-held })
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	<-entered
	if _, _, err := p.Query(context.Background(), "", nostr.Filter{Search: "quokka"}); !errors.Is(err, ErrLoading) ||
		!strings.Contains(err.Error(), "search index is loading (") {
		t.Fatalf("search while building: %v, want ErrLoading", err)
	}
	if s := p.State(); s.Ready || s.Step != StepRebuilding || s.Done == 0 {
		t.Fatalf("state while building: %+v", s)
	}
	p.OnEventSaved(context.Background(), saved)
	if err := e.store.DeleteEvent(context.Background(), deleted); err != nil {
		t.Fatal(err)
	}
	p.OnEventDeleted(context.Background(), deleted)
	close(held)
	select {
	case <-p.Loaded():
	case <-time.After(time.Minute):
		t.Fatal("not ready a minute after the build was released")
	}
	if err := p.State().Err; err != nil {
		t.Fatal(err)
	}
	if n := e.embedded("quokka"); n != 1 {
		t.Fatalf("the memory saved while building was embedded %d times, want once", n)
	}
	if got := findText(t, p, "", "quokka lighthouse"); len(got) != 1 || got[0].ID != saved.ID {
		t.Fatalf("search for the memory saved while building: %d results", len(got))
	}
	if _, ok := p.ix.Meta(deleted.ID); ok {
		t.Fatal("the memory deleted while building is indexed")
	}
	if n := p.Count(); n != 1201 {
		t.Fatalf("%d docs, want 1201", n)
	}
}

// Close during a load stops it; the plugin closes without an index.
func TestLoad_CloseWhileLoading(t *testing.T) {
	e := newLoadEnv(t)
	for i := range 600 {
		e.save(t, fmt.Sprintf("ops/host%d", i), fmt.Sprintf("host %d runs the nightly backup", i))
	}
	entered := make(chan struct{})
	var once sync.Once
	var p *Plugin
	p, err := Start(e.options(func(done, total int) {
		once.Do(func() { close(entered) })
	}))
	if err != nil {
		t.Fatal(err)
	}
	<-entered
	done := make(chan error, 1)
	go func() { done <- p.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Close did not stop the load")
	}
}
