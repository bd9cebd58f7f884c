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

	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/relay/store"
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

// embedded counts the texts embedded so far that hold text: a doc's
// whole text (queries and the floor's pseudo-queries are a few words).
func (e *loadEnv) embedded(text string) int {
	e.emb.mu.Lock()
	defer e.emb.mu.Unlock()
	n := 0
	for _, t := range e.emb.texts {
		if strings.Contains(t, text) {
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
	if _, _, err := p.Query(context.Background(), "", snowclaw.SearchFilter(nostr.Filter{}, snowclaw.SearchQuery{Text: "quokka"})); !errors.Is(err, ErrLoading) ||
		!strings.Contains(err.Error(), "search index is loading (") {
		t.Fatalf("search while building: %v, want ErrLoading", err)
	}
	if s := p.State(); s.Ready || s.Step != StepRebuilding || s.Done == 0 {
		t.Fatalf("state while building: %+v", s)
	}
	p.OnEventSaved(context.Background(), snowclaw.ReadEvent(saved))
	if err := e.store.DeleteEvent(context.Background(), deleted); err != nil {
		t.Fatal(err)
	}
	p.OnEventDeleted(context.Background(), snowclaw.ReadEvent(deleted))
	close(held)
	select {
	case <-p.Loaded():
	case <-time.After(time.Minute):
		t.Fatal("not ready a minute after the build was released")
	}
	if err := p.State().Err; err != nil {
		t.Fatal(err)
	}
	if n := e.embedded("the quokka rotates the lighthouse credentials"); n != 1 { // its text, not a query
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

// gatedStore holds every walk of the store (store.Each pages through
// QueryPage) until open is closed; reading events by id goes through.
type gatedStore struct {
	eventstore.Store
	open chan struct{}
}

func (g gatedStore) QueryPage(ctx context.Context, f nostr.Filter, after store.Cursor, limit int) ([]*nostr.Event, store.Cursor, error) {
	select {
	case <-g.open:
	case <-ctx.Done():
		return nil, store.Cursor{}, ctx.Err()
	}
	return store.PagerOf(g.Store).QueryPage(ctx, f, after, limit)
}

// A restart on an index its Close left whole is ready without walking
// the store: the private memories it held in RAM are read back by id and
// opened again, and who may read each scope is learnt from the index.
// The walk that finds what the index lacks (here an event written while
// the plugin was closed) runs after, with searches answered meanwhile.
func TestLoad_RestartIsReadyBeforeTheWalk(t *testing.T) {
	e := newLoadEnv(t)
	for i := range 300 {
		e.save(t, fmt.Sprintf("ops/host%d", i), fmt.Sprintf("host %d runs the nightly backup", i))
	}
	sealed, err := snowclaw.Seal(`{"summary":"the quokka vault code is 4417"}`, e.agentSK, e.agent)
	if err != nil {
		t.Fatal(err)
	}
	private := &nostr.Event{Kind: 30078, CreatedAt: nostr.Now(), Content: sealed,
		Tags: nostr.Tags{{"d", "snow:memory:vault"}, {"encrypted", "nip44"}}}
	if err := private.Sign(e.agentSK); err != nil {
		t.Fatal(err)
	}
	if err := e.store.SaveEvent(context.Background(), private); err != nil {
		t.Fatal(err)
	}
	p, err := Open(context.Background(), e.options(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := findText(t, p, e.agent, "quokka vault"); len(got) != 1 || got[0].ID != private.ID {
		t.Fatalf("the private memory before the restart: %d results", len(got))
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	offline := e.save(t, "ops/walrus", "the walrus guards the spare keys") // written while closed

	gate := make(chan struct{})
	o := e.options(nil)
	o.Store = gatedStore{Store: e.store, open: gate}
	p, err = Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	select {
	case <-p.Loaded():
	case <-time.After(time.Minute):
		t.Fatal("a restored index waited for the walk of the store")
	}
	if err := p.State().Err; err != nil || !p.ix.Restored() {
		t.Fatalf("load: %v, restored %v", err, p.ix.Restored())
	}
	if got := findText(t, p, e.agent, "quokka vault"); len(got) != 1 || got[0].ID != private.ID {
		t.Fatalf("the private memory once ready: %d results, want it (read back by id)", len(got))
	}
	if got := findText(t, p, "", "host 17 nightly backup"); len(got) == 0 {
		t.Fatal("a public memory is not found once ready: its scope's reader is unknown")
	}
	if got := findText(t, p, "", "walrus spare keys"); len(got) != 0 {
		t.Fatal("the event written while closed is found before the walk")
	}
	close(gate)
	testwait.Within(t, 30*time.Second, "the walk to index the event written while closed", func() bool { _, ok := p.ix.Meta(offline.ID); return ok })
	if got := findText(t, p, "", "walrus spare keys"); len(got) != 1 {
		t.Fatalf("the event written while closed: %d results after the walk", len(got))
	}
	if n := e.embedded("the quokka vault code is 4417"); n != 2 { // its text, not a query
		t.Fatalf("the private memory was embedded %d times, want twice (once per start)", n)
	}
}

// The walk behind a restored index never brings back an event the relay
// removed (or replaced) after the walk read it.
func TestLoad_WalkSkipsWhatTheRelayDropped(t *testing.T) {
	e := newLoadEnv(t)
	dropped := e.save(t, "ops/walrus", "the walrus guards the spare keys")
	p, err := Open(context.Background(), e.options(nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	if err := p.ix.Remove(context.Background(), dropped.ID); err != nil { // as if the index never had it
		t.Fatal(err)
	}
	p.q.applyMu.Lock()
	p.gone = map[string]bool{}
	p.noteGone([]string{dropped.ID}) // the relay deleted it after the walk read it
	p.q.applyMu.Unlock()
	if err := p.catchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.ix.Meta(dropped.ID); ok {
		t.Fatal("the walk indexed an event the relay had dropped")
	}
}

// failingStore fails every walk of the store.
type failingStore struct{ eventstore.Store }

func (failingStore) QueryPage(context.Context, nostr.Filter, store.Cursor, int) ([]*nostr.Event, store.Cursor, error) {
	return nil, store.Cursor{}, errors.New("disk on fire")
}

// A load that fails says so: the state carries the error, searches are
// refused with it, and Loaded is closed so that the relay can stop.
func TestLoad_FailureIsReported(t *testing.T) {
	e := newLoadEnv(t)
	o := e.options(nil)
	o.Store = failingStore{e.store}
	p, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	select {
	case <-p.Loaded():
	case <-time.After(time.Minute):
		t.Fatal("a failing load never ended")
	}
	s := p.State()
	if s.Ready || s.Err == nil || !strings.Contains(s.Err.Error(), "disk on fire") {
		t.Fatalf("state after a failed load: %+v", s)
	}
	_, _, err = p.Query(context.Background(), "", snowclaw.SearchFilter(nostr.Filter{}, snowclaw.SearchQuery{Text: "anything"}))
	if err == nil || !strings.Contains(err.Error(), "error: search index failed to load") {
		t.Fatalf("search after a failed load: %v", err)
	}
	if errors.Is(err, ErrLoading) {
		t.Fatal("a failed load answers as if it were still loading (a client would retry forever)")
	}
}

// The owner's trust list set while the index loads is checked at once
// (a bad one refused), shown by Trust, and ranks from the first search.
func TestLoad_SourcesSetWhileLoading(t *testing.T) {
	e := newLoadEnv(t)
	for i := range 600 {
		e.save(t, fmt.Sprintf("ops/host%d", i), fmt.Sprintf("host %d runs the nightly backup", i))
	}
	entered, held := make(chan struct{}), make(chan struct{})
	var once, release sync.Once
	p, err := Start(e.options(func(done, total int) {
		once.Do(func() { close(entered); <-held })
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { release.Do(func() { close(held) }); p.Close() })
	<-entered
	if err := p.SetSources(map[string]float64{"not a key": 2}); err == nil {
		t.Fatal("a bad source accepted while loading")
	}
	author, _ := nostr.GetPublicKey(e.author)
	if err := p.SetSources(map[string]float64{author: 3}); err != nil {
		t.Fatal(err)
	}
	if w, ok := p.Trust().Source(author); !ok || w != 3 {
		t.Fatalf("trust while loading: %v %v, want 3", w, ok)
	}
	release.Do(func() { close(held) })
	<-p.Loaded()
	if w, ok := p.ix.Trust().Source(author); !ok || w != 3 {
		t.Fatalf("the index's trust once ready: %v %v, want the weight set while loading", w, ok)
	}
}
