package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/internal/pgtest"
	"github.com/snowclaw/snowclaw/relay/store"
	"github.com/snowclaw/snowclaw/relay/store/postgres"
)

// NIP-01 replacement, settled by the database: newest created_at wins,
// ties go to the lowest id, an older version is not stored and deletes
// nothing, and other addresses are untouched.
func TestReplace_Rule(t *testing.T) {
	ctx := context.Background()
	s := open(t, "")
	pk := newKey()
	neighbour := save(t, s, ev(pk, 30078, 100, nostr.Tags{{"d", "hidopen"}}, "neighbour"))
	v1 := ev(pk, 30078, 100, nostr.Tags{{"d", "hid"}}, "v1")
	v2 := ev(pk, 30078, 101, nostr.Tags{{"d", "hid"}}, "v2")
	older := ev(pk, 30078, 99, nostr.Tags{{"d", "hid"}}, "older")
	tieA := ev(pk, 30078, 101, nostr.Tags{{"d", "hid"}}, "tie a")
	tieB := ev(pk, 30078, 101, nostr.Tags{{"d", "hid"}}, "tie b")
	lowest := min(v2.ID, tieA.ID, tieB.ID)
	for _, c := range []struct {
		e       *nostr.Event
		stored  bool
		current string
	}{
		{v1, true, "v1"},
		{v2, true, "v2"},
		{older, false, "v2"},
		{v1, false, "v2"},
		{v2, false, "v2"},
		{tieA, tieA.ID < v2.ID, ""},
		{tieB, tieB.ID < min(v2.ID, tieA.ID), ""},
	} {
		err := s.ReplaceEvent(ctx, c.e)
		if c.stored && err != nil || !c.stored && !errors.Is(err, store.ErrNotNewer) {
			t.Fatalf("replace with %q: err %v, want stored=%v", c.e.Content, err, c.stored)
		}
		got := query(t, s, nostr.Filter{Kinds: []int{30078}, Authors: []string{pk}, Tags: nostr.TagMap{"d": {"hid"}}})
		if len(got) != 1 {
			t.Fatalf("after %q the address holds %d versions", c.e.Content, len(got))
		}
		if c.current != "" && got[0].Content != c.current {
			t.Fatalf("after %q the address holds %q, want %q", c.e.Content, got[0].Content, c.current)
		}
	}
	got := query(t, s, nostr.Filter{Tags: nostr.TagMap{"d": {"hid"}}})
	if got[0].ID != lowest {
		t.Fatalf("of three versions at one created_at, %q stayed, want the lowest id", got[0].Content)
	}
	if n := query(t, s, nostr.Filter{IDs: []string{neighbour.ID}}); len(n) != 1 {
		t.Fatal("replacing hid removed hidopen")
	}
	// kind 0 (replaceable, no d): one version per author
	save(t, s, ev(pk, 1, 5, nil, "a note"))
	if err := s.ReplaceEvent(ctx, ev(pk, 0, 10, nil, "profile 1")); err != nil {
		t.Fatal(err)
	}
	if err := s.ReplaceEvent(ctx, ev(pk, 0, 11, nostr.Tags{{"d", "ignored"}}, "profile 2")); err != nil {
		t.Fatal(err)
	}
	if got := contents(query(t, s, nostr.Filter{Kinds: []int{0}})); len(got) != 1 || got[0] != "profile 2" {
		t.Fatalf("kind 0 after two versions: %q", got)
	}
}

// Many writers of one address at once, through one store and through two
// instances on one database: exactly one version stays, the newest, and
// every other writer is told ErrNotNewer or lost to a newer one later.
func TestReplace_Races(t *testing.T) {
	url := pgtest.New(t)
	a, b := open(t, url), open(t, url)
	pk := newKey()
	const writers = 40
	var evs []*nostr.Event
	for i := range writers {
		evs = append(evs, ev(pk, 30078, nostr.Timestamp(1000+i%7), nostr.Tags{{"d", "race"}}, fmt.Sprint("v", i)))
	}
	want := evs[0]
	for _, e := range evs {
		if e.CreatedAt > want.CreatedAt || e.CreatedAt == want.CreatedAt && e.ID < want.ID {
			want = e
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	start := make(chan struct{})
	for i, e := range evs {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			<-start
			err := s.ReplaceEvent(context.Background(), e)
			if err != nil && !errors.Is(err, store.ErrNotNewer) {
				t.Error(err)
			}
			if err == nil {
				mu.Lock()
				won++
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	for _, s := range []*postgres.Store{a, b} {
		got := query(t, s, nostr.Filter{Authors: []string{pk}})
		if len(got) != 1 || got[0].ID != want.ID {
			t.Fatalf("after the race the address holds %q, want only %q", contents(got), want.Content)
		}
	}
	if won < 1 {
		t.Fatal("no writer was told it stored its version")
	}
	// the newest was stored by exactly one writer, and the log has one
	// save per win, the last of them the newest
	var saves []store.Change
	ctx, cancel := context.WithCancel(context.Background())
	head, _ := a.Head(ctx)
	err := b.Follow(ctx, 0, func(c store.Change) error {
		if c.Op == store.Saved {
			saves = append(saves, c)
		}
		if c.Seq == head {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if len(saves) != won || saves[len(saves)-1].Event.ID != want.ID {
		t.Fatalf("log has %d saves, %d writers won; last logged %q, want %q", len(saves), won, saves[len(saves)-1].Event.Content, want.Content)
	}
}
