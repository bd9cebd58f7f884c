package groups_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/fiatjaf/eventstore/slicestore"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// A change applied while the group's metadata is being written (by the
// loop, or for another change) must still reach the stored metadata
// before its OK: the write under way may have read the state before it.
// Here edit A's write is held in the middle; edit B comes meanwhile; once
// both returned (their OKs), the stored 39000 must carry B's name.
func TestMetadata_ChangeDuringAWriteIsNotLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// in RAM: a store's goroutines must live in the bubble
		st := &slicestore.SliceStore{}
		if err := st.Init(); err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		w := newWorldOn(st)
		w.setup(t)
		ctx := context.Background()
		held, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		w.beforePublish = func(evt *nostr.Event) {
			if evt.Kind == snowclaw.KindGroupMetadata && evt.Tags.GetD() == "pub" {
				once.Do(func() {
					close(held)
					<-release
				})
			}
		}
		edit := func(name string) *nostr.Event {
			return signed(t, fz.owner, snowclaw.KindEditMetadata, nostr.Now(), nostr.Tags{{"h", "pub"}, {"name", name}}, "")
		}
		a, b := edit("Edit A"), edit("Edit B")
		var wg sync.WaitGroup
		refusals := make(chan string, 2)
		submit := func(evt *nostr.Event) {
			defer wg.Done()
			if reject, msg := w.submit(ctx, evt); reject {
				refusals <- msg
			}
		}
		wg.Add(2)
		go submit(a)
		<-held // A's metadata is being written
		go submit(b)
		synctest.Wait() // B applied, and waiting or returned
		close(release)
		wg.Wait()
		close(refusals)
		for msg := range refusals {
			t.Fatalf("an edit was refused: %s", msg)
		}
		got := storedMetadata(t, w, "pub")
		if got == nil || got.Tags.Find("name") == nil || got.Tags.Find("name")[1] != "Edit B" {
			t.Fatalf("after both OKs the stored metadata is %v, want the name of edit B", got)
		}
	})
}

// storedMetadata is the newest relay-signed 39000 of gid in w's store.
func storedMetadata(t *testing.T, w *world, gid string) *nostr.Event {
	t.Helper()
	ch, err := w.store.QueryEvents(context.Background(), nostr.Filter{
		Kinds: []int{snowclaw.KindGroupMetadata}, Authors: []string{pub(fz.relay)}, Tags: nostr.TagMap{"d": {gid}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var newest *nostr.Event
	for evt := range ch {
		if newest == nil || evt.CreatedAt > newest.CreatedAt {
			newest = evt
		}
	}
	return newest
}
