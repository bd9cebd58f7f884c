package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/fiatjaf/eventstore"
	badgerstore "github.com/fiatjaf/eventstore/badger"
	"github.com/fiatjaf/eventstore/slicestore"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/relay/store"
	"github.com/snowclaw/snowclaw/relay/store/postgres"
)

// burst is the second that holds more events than a page, many times over.
const burst = nostr.Timestamp(1_700_000_000)

func openStore(t testing.TB) *badgerstore.BadgerBackend {
	t.Helper()
	b := &badgerstore.BadgerBackend{
		Path: t.TempDir(), MaxLimit: store.PageSize,
		BadgerOptionsModifier: func(o badger.Options) badger.Options { return o.WithLogger(nil) },
	}
	if err := b.Init(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// put stores one event. The store does not check signatures, and
// thousands of them would slow the race detector down, so it gets an id
// and a dummy signature.
func put(t testing.TB, b eventstore.Store, pk string, kind int, at nostr.Timestamp, tags nostr.Tags, content string) *nostr.Event {
	t.Helper()
	evt := mk(pk, kind, at, tags, content)
	if err := b.SaveEvent(context.Background(), evt); err != nil {
		t.Fatal(err)
	}
	return evt
}

// mk is put without the store.
func mk(pk string, kind int, at nostr.Timestamp, tags nostr.Tags, content string) *nostr.Event {
	evt := &nostr.Event{PubKey: pk, Kind: kind, CreatedAt: at, Tags: tags, Content: content, Sig: strings.Repeat("0", 128)}
	if evt.Tags == nil {
		evt.Tags = nostr.Tags{}
	}
	evt.ID = evt.GetID()
	return evt
}

// saveInOrder stores evs in their order. PostgreSQL takes them in
// batches (Import: one transaction and one round trip each, in order, by
// SaveEvent's rules): one at a time, the 9,000 events of a world cost
// over a minute of round trips and prove nothing more about paging.
func saveInOrder(t testing.TB, b eventstore.Store, evs []*nostr.Event) {
	t.Helper()
	if pg, ok := b.(*postgres.Store); ok {
		for len(evs) > 0 {
			n := min(len(evs), 1000)
			if stored, err := pg.Import(context.Background(), evs[:n]); err != nil || stored != n {
				t.Fatalf("import: %d of %d stored, %v", stored, n, err)
			}
			evs = evs[n:]
		}
		return
	}
	for _, evt := range evs {
		if err := b.SaveEvent(context.Background(), evt); err != nil {
			t.Fatal(err)
		}
	}
}

// world is a store with a burst second of 5,000 notes (every third tagged
// "t"=x), two deletions hidden in the burst, and older events around it.
type world struct {
	b     eventstore.Store
	all   []*nostr.Event
	older []*nostr.Event // before the burst
	other string         // a second author
}

func buildWorld(t *testing.T, b eventstore.Store) *world {
	t.Helper()
	w := &world{b: b}
	sk, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	add := func(e *nostr.Event) { w.all = append(w.all, e) }
	for i := range 3 {
		add(mk(sk, 1, burst+1+nostr.Timestamp(i), nil, fmt.Sprint("newer ", i)))
	}
	for i := range 5000 {
		var tags nostr.Tags
		if i%3 == 0 {
			tags = nostr.Tags{{"t", "x"}}
		}
		add(mk(sk, 1, burst, tags, fmt.Sprint("burst ", i)))
	}
	// a second author, interleaved in the burst (serials alternate)
	other, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	w.other = other
	for i := range 1200 {
		add(mk(other, 7+i%2, burst, nil, fmt.Sprint("other ", i)))
		add(mk(sk, 1, burst, nil, fmt.Sprint("mine between ", i)))
	}
	add(mk(other, 7, burst-5, nil, "other, older"))
	add(mk(sk, 5, burst, nostr.Tags{{"e", w.all[0].ID}}, "in the burst"))
	add(mk(sk, 5, burst, nostr.Tags{{"e", w.all[1].ID}}, "in the burst too"))
	for i := range 1500 {
		e := mk(sk, 1, burst-1-nostr.Timestamp(i%40), nostr.Tags{{"t", "x"}}, fmt.Sprint("older ", i))
		add(e)
		w.older = append(w.older, e)
	}
	add(mk(sk, 5, burst-100, nostr.Tags{{"e", w.older[0].ID}}, "old deletion"))
	saveInOrder(t, w.b, w.all)
	return w
}

// want is what a correct Each returns for f: every match once.
func (w *world) want(f nostr.Filter) []*nostr.Event {
	var out []*nostr.Event
	for _, e := range w.all {
		if f.Matches(e) {
			out = append(out, e)
		}
	}
	return out
}

// sameOnce fails unless got holds exactly the events of want, each once,
// newest second first (the order inside a second is the store's).
func sameOnce(t *testing.T, got, want []*nostr.Event) {
	t.Helper()
	seen := make(map[string]bool, len(got))
	for i, e := range got {
		if seen[e.ID] {
			t.Fatalf("event %s returned twice", e.ID)
		}
		seen[e.ID] = true
		if i > 0 && e.CreatedAt > got[i-1].CreatedAt {
			t.Fatalf("event %d is newer than the one before it", i)
		}
	}
	for _, e := range want {
		if !seen[e.ID] {
			t.Fatalf("got %d events, want %d: %s (created_at %d) is missing", len(got), len(want), e.ID, e.CreatedAt)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d", len(got), len(want))
	}
}

// TestEachBurstSecond is finding 1: a second holding more events than a
// page used to end the walk there, losing everything older. The world is
// built once per backend for the subtests, which only read it.
func TestEachBurstSecond(t *testing.T) {
	for name, open := range backends() {
		t.Run(name, func(t *testing.T) {
			w := buildWorld(t, open(t))
			t.Run("filters", func(t *testing.T) { testFilters(t, w) })
			t.Run("stops early", func(t *testing.T) { testStopsEarly(t, w) })
			if _, ok := w.b.(*badgerstore.BadgerBackend); ok {
				t.Run("unpageable store fails loudly", func(t *testing.T) { testUnpageable(t, w) })
			}
		})
	}
}

func testFilters(t *testing.T, w *world) {
	ts := func(v nostr.Timestamp) *nostr.Timestamp { return &v }
	for name, f := range map[string]nostr.Filter{
		"everything":        {},
		"notes":             {Kinds: []int{1}},
		"deletions":         {Kinds: []int{5}},
		"kinds twice":       {Kinds: []int{5, 1, 5}},
		"tag":               {Tags: nostr.TagMap{"t": {"x"}}},
		"kind and tag":      {Kinds: []int{1}, Tags: nostr.TagMap{"t": {"x"}}},
		"until the burst":   {Until: ts(burst)},
		"since the burst":   {Since: ts(burst)},
		"only the burst":    {Since: ts(burst), Until: ts(burst)},
		"a page's limit":    {Limit: 3}, // ignored: Each is everything
		"author":            {Authors: []string{w.all[0].PubKey}},
		"nobody":            {Authors: []string{w.all[0].ID}},
		"ids across burst":  {IDs: []string{w.all[10].ID, w.older[5].ID, w.all[4000].ID}},
		"older than burst":  {Until: ts(burst - 1)},
		"burst kind 1 only": {Kinds: []int{1}, Since: ts(burst), Until: ts(burst)},
		"two authors":       {Authors: []string{w.all[0].PubKey, w.other}},
		"other author":      {Authors: []string{w.other}},
		"author and kinds":  {Authors: []string{w.other}, Kinds: []int{8, 1}},
		"authors and kinds": {Authors: []string{w.other, w.all[0].PubKey}, Kinds: []int{7, 5}},
		"kinds 7 and 8":     {Kinds: []int{8, 7}},
		"no kinds":          {Kinds: []int{}},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := store.All(context.Background(), w.b, f)
			if err != nil {
				t.Fatal(err)
			}
			sameOnce(t, got, w.want(nostr.Filter{IDs: f.IDs, Kinds: f.Kinds, Authors: f.Authors, Tags: f.Tags, Since: f.Since, Until: f.Until}))
		})
	}
}

// TestScanSmallPages pages a burst with pages smaller than the second and
// not dividing it, so cursors land mid-second again and again.
func TestScanSmallPages(t *testing.T) {
	for name, open := range backends() {
		t.Run(name, func(t *testing.T) { testScanSmallPages(t, open(t)) })
	}
}

func testScanSmallPages(t *testing.T, b eventstore.Store) {
	sk, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	var all []*nostr.Event
	for i := range 50 {
		all = append(all, put(t, b, sk, 1, burst-nostr.Timestamp(i%3*(i%2)), nil, fmt.Sprint(i)))
	}
	w := &world{b: b, all: all}
	for _, size := range []int{1, 2, 7, 16, 49, 50, 51} {
		var got []*nostr.Event
		err := store.Scan(context.Background(), b, nostr.Filter{}, size, func(e *nostr.Event) bool {
			got = append(got, e)
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		sameOnce(t, got, w.want(nostr.Filter{}))
	}
}

// testStopsEarly: fn returning false ends the walk.
func testStopsEarly(t *testing.T, w *world) {
	n := 0
	if err := store.Each(context.Background(), w.b, nostr.Filter{}, func(*nostr.Event) bool { n++; return n < 1200 }); err != nil {
		t.Fatal(err)
	}
	if n != 1200 {
		t.Fatalf("fn called %d times after asking to stop at 1200", n)
	}
}

// opaque hides the badger backend behind the plain interface.
type opaque struct{ eventstore.Store }

// unwrapping is a wrapper that says what it wraps.
type unwrapping struct{ eventstore.Store }

func (u unwrapping) Unwrap() eventstore.Store { return u.Store }

// testUnpageable: a store that cannot read inside a second gets a typed
// error, never a silent skip; one that names the store it wraps is paged
// through it.
func testUnpageable(t *testing.T, w *world) {
	_, err := store.All(context.Background(), opaque{w.b}, nostr.Filter{})
	if !errors.Is(err, store.ErrSecondTooFull) {
		t.Fatalf("opaque store over a burst: err %v, want ErrSecondTooFull", err)
	}
	// without a burst in range, plain queries are enough
	until := burst - 1
	got, err := store.All(context.Background(), opaque{w.b}, nostr.Filter{Until: &until})
	if err != nil {
		t.Fatalf("opaque store below the burst: %v", err)
	}
	sameOnce(t, got, w.want(nostr.Filter{Until: &until}))
	got, err = store.All(context.Background(), unwrapping{w.b}, nostr.Filter{})
	if err != nil {
		t.Fatalf("unwrapping store: %v", err)
	}
	sameOnce(t, got, w.all)
}

// TestBadgerLayout checks the key and value layout the second reader
// relies on, so an eventstore upgrade that changes it fails here.
func TestBadgerLayout(t *testing.T) {
	b := openStore(t)
	sk, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	addr := "30078:" + sk + ":x"
	evt := put(t, b, sk, 30078, burst, nostr.Tags{{"d", "x"}, {"e", sk}, {"a", addr}}, "layout")
	p := store.PagerOf(b)
	top := strings.Repeat("f", 64)
	for _, f := range []nostr.Filter{
		{}, {Kinds: []int{30078}}, {Authors: []string{evt.PubKey}}, {Kinds: []int{30078}, Authors: []string{evt.PubKey}}, {IDs: []string{evt.ID}},
		{Tags: nostr.TagMap{"d": {"x"}}}, {Tags: nostr.TagMap{"e": {sk}}}, {Tags: nostr.TagMap{"a": {addr}}},
	} {
		// a cursor just above the event forces the read inside its second
		page, _, err := p.QueryPage(context.Background(), f, store.Cursor{CreatedAt: burst, ID: top}, 10)
		if err != nil || len(page) != 1 || page[0].ID != evt.ID || page[0].Content != "layout" {
			t.Fatalf("filter %v: page %v, err %v; want the stored event", f, page, err)
		}
	}
}

// TestSliceStore: a store with neither capability but a known cap (the
// in-memory one the groups tests use) is paged second by second, and a
// second too full for one of its queries is an error, not a loss.
func TestSliceStore(t *testing.T) {
	s := &slicestore.SliceStore{}
	if err := s.Init(); err != nil {
		t.Fatal(err)
	}
	pk, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	var all []*nostr.Event
	for i := range 1200 {
		all = append(all, put(t, s, pk, 9000+i%3, burst-nostr.Timestamp(i%300), nil, fmt.Sprint(i)))
	}
	got, err := store.All(context.Background(), s, nostr.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	sameOnce(t, got, all)
	for i := range 600 {
		put(t, s, pk, 1, burst+10, nil, fmt.Sprint("crowd ", i))
	}
	if _, err := store.All(context.Background(), s, nostr.Filter{}); !errors.Is(err, store.ErrSecondTooFull) {
		t.Fatalf("600 events in one second of a store capped at 500: err %v, want ErrSecondTooFull", err)
	}
}
