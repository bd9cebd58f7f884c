package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/fiatjaf/eventstore"
	badgerstore "github.com/fiatjaf/eventstore/badger"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/relay/store"
)

// saveCases are events with every shape of tag eventstore's badger treats
// differently: plain, 32-byte hex, an address, a 65-character "hex"
// value (eventstore keeps its first 32 bytes), the same value under two
// tag names (indexed once), values too long or empty, multi-letter
// names, one-item tags, and content of odd sizes.
func saveCases(pk string) []*nostr.Event {
	hex64 := strings.Repeat("ab", 32)
	addr := "30078:" + pk + ":x"
	tagsets := []nostr.Tags{
		{},
		{{"t", "x"}, {"e", hex64}, {"a", addr}, {"p", hex64}},
		{{"e", hex64 + "c"}, {"e", hex64 + "zz"}, {"q", "1:2:3"}, {"a", "99999:" + pk + ":d"}},
		{{"d", ""}, {"d"}, {"h", strings.Repeat("h", 100)}, {"h", strings.Repeat("h", 101)}, {"title", "long name"}},
		{{"t", "é✓"}, {"t", "é✓"}, {"x", "a", "b", "c", ""}, {}},
	}
	var out []*nostr.Event
	for i, tags := range tagsets {
		for j, content := range []string{"", "hello", strings.Repeat("ü", 3000)} {
			evt := &nostr.Event{PubKey: pk, Kind: []int{1, 9, 30078, 65535}[(i+j)%4], CreatedAt: nostr.Timestamp(1_700_000_000 + i*10 + j), Tags: tags, Content: content, Sig: strings.Repeat("0f", 64)}
			evt.ID = evt.GetID()
			out = append(out, evt)
		}
	}
	return out
}

// dump is every key and value in b but eventstore's version key (255).
func dump(t *testing.T, b *badgerstore.BadgerBackend) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := b.DB.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.DefaultIteratorOptions)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if k := it.Item().Key(); len(k) == 1 && k[0] == 255 {
				continue
			}
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			out[fmt.Sprintf("%x", it.Item().Key())] = fmt.Sprintf("%x", v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBadgerSave_SameBytes: the relay's own badger writer leaves exactly
// the keys and values eventstore's SaveEvent leaves for the same events,
// refuses what it refuses, and eventstore's DeleteEvent removes every key
// of an event it wrote.
func TestBadgerSave_SameBytes(t *testing.T) {
	ctx := context.Background()
	ours := store.NewExact(openStore(t))
	theirs := openStore(t)
	pk := newKey(t)
	evs := saveCases(pk)
	tooBig := &nostr.Event{PubKey: pk, Kind: 1, Content: strings.Repeat("x", 70000), Tags: nostr.Tags{}}
	tooBig.ID = tooBig.GetID()
	for _, evt := range append(evs, evs[3], tooBig) {
		errOurs, errTheirs := ours.SaveEvent(ctx, evt), theirs.SaveEvent(ctx, evt)
		if (errOurs == nil) != (errTheirs == nil) || errors.Is(errOurs, eventstore.ErrDupEvent) != errors.Is(errTheirs, eventstore.ErrDupEvent) {
			t.Fatalf("event %s: ours %v, eventstore %v", evt.ID, errOurs, errTheirs)
		}
	}
	got, want := dump(t, ours.Unwrap().(*badgerstore.BadgerBackend)), dump(t, theirs)
	if len(want) < 100 {
		t.Fatalf("eventstore wrote %d keys; the cases are too few", len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("key %s: ours %q, eventstore %q", k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("key %s written only by ours", k)
		}
	}
	// deleting with eventstore what ours wrote leaves nothing behind
	for _, evt := range evs {
		if err := ours.DeleteEvent(ctx, evt); err != nil {
			t.Fatal(err)
		}
	}
	if left := dump(t, ours.Unwrap().(*badgerstore.BadgerBackend)); len(left) != 0 {
		t.Fatalf("%d keys left after deleting every event: %v", len(left), left)
	}
}

// TestBadgerSave_Allocs: storing a short note allocates a few kilobytes
// (badger's transaction included), not eventstore's 64 KB buffer.
func TestBadgerSave_Allocs(t *testing.T) {
	ctx := context.Background()
	s := store.NewExact(openStore(t))
	pk := newKey(t)
	const n = 300
	evs := make([]*nostr.Event, n)
	for i := range evs {
		evs[i] = &nostr.Event{PubKey: pk, Kind: 9, CreatedAt: nostr.Timestamp(1_700_000_000 + i), Tags: nostr.Tags{{"h", "team"}}, Content: "a note of about twenty four words", Sig: strings.Repeat("0f", 64)}
		evs[i].ID = evs[i].GetID()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, evt := range evs {
		if err := s.SaveEvent(ctx, evt); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / n
	t.Logf("%d bytes allocated per saved note", per)
	if per > 16<<10 {
		t.Fatalf("%d bytes allocated per saved note, want at most 16 KB", per)
	}
	if got := dump(t, s.Unwrap().(*badgerstore.BadgerBackend)); !bytes.Contains([]byte(fmt.Sprint(got)), []byte(fmt.Sprintf("%x", "a note of about"))) {
		t.Fatal("the notes are not in the store")
	}
}
