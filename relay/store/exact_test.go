package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/relay/store"
)

// badger indexes tag values without a terminator, so the index range of
// d="hid" also holds every d="hid…" key: its answers carry strangers, and
// a limit (or a replaceable address's theoretical limit of one) can be
// spent on them. These tests pin that the wrapper answers exactly.
func TestExact_TagPrefixesAreNotMatches(t *testing.T) {
	ctx := context.Background()
	b := openStore(t)
	pk := nostr.GeneratePrivateKey()
	pk, _ = nostr.GetPublicKey(pk)
	// the wanted event is the older one, so a store answering newest
	// first spends its one slot on the impostor
	want := put(t, b, pk, 30078, 1000, nostr.Tags{{"d", "hid"}}, "wanted")
	put(t, b, pk, 30078, 1001, nostr.Tags{{"d", "hidopen"}}, "impostor")
	put(t, b, pk, 1, 1002, nostr.Tags{{"t", "hidden"}}, "another impostor")
	x := store.NewExact(b)

	for name, f := range map[string]nostr.Filter{
		"address":        {Kinds: []int{30078}, Authors: []string{pk}, Tags: nostr.TagMap{"d": {"hid"}}},
		"address limit1": {Kinds: []int{30078}, Authors: []string{pk}, Tags: nostr.TagMap{"d": {"hid"}}, Limit: 1},
		"d only":         {Tags: nostr.TagMap{"d": {"hid"}}, Limit: 1},
	} {
		ch, err := x.QueryEvents(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for evt := range ch {
			got = append(got, evt.Content)
		}
		if len(got) != 1 || got[0] != "wanted" {
			t.Errorf("%s: got %q, want only the event whose d is exactly hid", name, got)
		}
	}
	all, err := store.All(ctx, b, nostr.Filter{Kinds: []int{30078}, Authors: []string{pk}, Tags: nostr.TagMap{"d": {"hid"}}})
	if err != nil || len(all) != 1 || all[0].ID != want.ID {
		t.Errorf("store.All = %v, %v; want the one event", all, err)
	}
}

// Replacing d="hid" must leave d="hidopen" alone (badger's own
// ReplaceEvent deletes it when it is older).
func TestExact_ReplaceTouchesOnlyItsAddress(t *testing.T) {
	ctx := context.Background()
	b := openStore(t)
	pk := nostr.GeneratePrivateKey()
	pk, _ = nostr.GetPublicKey(pk)
	put(t, b, pk, 30078, 1000, nostr.Tags{{"d", "hidopen"}}, "neighbour")
	old := put(t, b, pk, 30078, 1000, nostr.Tags{{"d", "hid"}}, "v1")
	x := store.NewExact(b)
	v2 := &nostr.Event{PubKey: pk, Kind: 30078, CreatedAt: 1001, Tags: nostr.Tags{{"d", "hid"}}, Content: "v2", Sig: old.Sig}
	v2.ID = v2.GetID()
	if err := x.ReplaceEvent(ctx, v2); err != nil {
		t.Fatal(err)
	}
	stale := &nostr.Event{PubKey: pk, Kind: 30078, CreatedAt: 999, Tags: nostr.Tags{{"d", "hid"}}, Content: "v0", Sig: old.Sig}
	stale.ID = stale.GetID()
	if err := x.ReplaceEvent(ctx, stale); !errors.Is(err, store.ErrNotNewer) {
		t.Fatalf("replacing with an older version: err %v, want ErrNotNewer", err)
	}
	all, err := store.All(ctx, b, nostr.Filter{Authors: []string{pk}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, evt := range all {
		got[evt.Content] = true
	}
	if len(all) != 2 || !got["neighbour"] || !got["v2"] {
		t.Errorf("after replacing hid: %v; want the neighbour and v2 only", got)
	}
}

// Deletions from many goroutines at once (replacements of different
// addresses, NIP-09, the agent's forgetting) must not race inside the
// backend; under -race this fails without ExactStore's serialization.
func TestExact_ConcurrentDeletes(t *testing.T) {
	ctx := context.Background()
	b := openStore(t)
	pk := nostr.GeneratePrivateKey()
	pk, _ = nostr.GetPublicKey(pk)
	var evs []*nostr.Event
	for i := range 64 {
		evs = append(evs, put(t, b, pk, 1, nostr.Timestamp(1000+i), nil, "n"))
	}
	x := store.NewExact(b)
	var wg sync.WaitGroup
	for _, evt := range evs {
		wg.Go(func() {
			if err := x.DeleteEvent(ctx, evt); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if left, err := store.All(ctx, b, nostr.Filter{Authors: []string{pk}}); err != nil || len(left) != 0 {
		t.Fatalf("left after deleting all: %d, %v", len(left), err)
	}
}
