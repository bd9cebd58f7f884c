package relay

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"

	"github.com/dgraph-io/badger/v4"
	"github.com/fiatjaf/eventstore"
	badgerstore "github.com/fiatjaf/eventstore/badger"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// openBadger opens the default store. Its own limit is set high: limits a
// client sees are applied by the read path, and internal jobs page through
// everything.
func openBadger(path string) (*badgerstore.BadgerBackend, error) {
	b := &badgerstore.BadgerBackend{
		Path:     path,
		MaxLimit: 100_000,
		BadgerOptionsModifier: func(o badger.Options) badger.Options {
			return o.WithLogger(nil)
		},
	}
	if err := b.Init(); err != nil {
		return nil, fmt.Errorf("opening event store at %s: %w", path, err)
	}
	return b, nil
}

// writeGuard serializes writes to one replaceable address, so that the
// "is there a newer version?" check and the replacement are one step.
type writeGuard struct {
	stripes [64]sync.Mutex
}

func (w *writeGuard) lock(addr string) func() {
	h := fnv.New32a()
	h.Write([]byte(addr))
	m := &w.stripes[h.Sum32()%uint32(len(w.stripes))]
	m.Lock()
	return m.Unlock
}

func address(evt *nostr.Event) string {
	if nostr.IsAddressableKind(evt.Kind) {
		return fmt.Sprintf("%d:%s:%s", evt.Kind, evt.PubKey, evt.Tags.GetD())
	}
	return fmt.Sprintf("%d:%s:", evt.Kind, evt.PubKey)
}

func addressFilter(evt *nostr.Event) nostr.Filter {
	f := nostr.Filter{Kinds: []int{evt.Kind}, Authors: []string{evt.PubKey}, Limit: 10}
	if nostr.IsAddressableKind(evt.Kind) {
		f.Tags = nostr.TagMap{"d": {evt.Tags.GetD()}}
	}
	return f
}

// newerStored reports whether the store holds a version of evt's address
// that is not older than evt (NIP-01: newest created_at wins, ties go to
// the lowest id).
func newerStored(ctx context.Context, store eventstore.Store, evt *nostr.Event) (bool, error) {
	ch, err := store.QueryEvents(ctx, addressFilter(evt))
	if err != nil {
		return false, err
	}
	newer := false
	for prev := range ch {
		if prev.ID == evt.ID || prev.CreatedAt > evt.CreatedAt || (prev.CreatedAt == evt.CreatedAt && prev.ID < evt.ID) {
			newer = true
		}
	}
	return newer, nil
}

// deletedBy returns a human reason when evt was deleted before (NIP-09
// kind 5 by its author, or a NIP-29 delete-event 9005 in its group) and
// must not come back. khatru's own check queries the wrong tag key.
func deletedBy(ctx context.Context, store eventstore.Store, evt *nostr.Event) (string, error) {
	ch, err := store.QueryEvents(ctx, nostr.Filter{
		Kinds: []int{snowclaw.KindDeletion, snowclaw.KindDeleteEvent},
		Tags:  nostr.TagMap{"e": {evt.ID}},
		Limit: 50,
	})
	if err != nil {
		return "", err
	}
	reason := ""
	for d := range ch {
		switch {
		case d.Kind == snowclaw.KindDeletion && d.PubKey == evt.PubKey:
			reason = "blocked: this event was deleted by its author (NIP-09) and stays deleted"
		case d.Kind == snowclaw.KindDeleteEvent && snowclaw.GroupOf(d) != "" && snowclaw.GroupOf(d) == snowclaw.GroupOf(evt):
			reason = "blocked: this event was deleted by a group moderator and stays deleted"
		}
	}
	if reason != "" || !(nostr.IsReplaceableKind(evt.Kind) || nostr.IsAddressableKind(evt.Kind)) {
		return reason, nil
	}
	// an address deletion covers every version up to its own created_at
	since := evt.CreatedAt
	ch, err = store.QueryEvents(ctx, nostr.Filter{
		Kinds:   []int{snowclaw.KindDeletion},
		Authors: []string{evt.PubKey},
		Tags:    nostr.TagMap{"a": {address(evt)}},
		Since:   &since,
		Limit:   50,
	})
	if err != nil {
		return "", err
	}
	for range ch {
		reason = "blocked: this address was deleted by its author (NIP-09) at or after this version's created_at; publish a newer version to recreate it"
	}
	return reason, nil
}
