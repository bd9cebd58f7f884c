package agent

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/memory"
)

// TestAgent_DeletedDropsOnlyItsOwnRecords: a deleted event of the
// agent's takes its record out of RAM; a look-alike signed by someone
// else does nothing; the agent's own NIP-09 request leaves alone a
// record remembered again while it was being published.
func TestAgent_DeletedDropsOnlyItsOwnRecords(t *testing.T) {
	var (
		mu       sync.Mutex
		stored   = map[string]*nostr.Event{} // d tag → last version
		a        *Agent
		restated memory.Item
	)
	a = testAgent(t, Options{})
	a.o.Publish = func(_ context.Context, evt *nostr.Event) error {
		mu.Lock()
		defer mu.Unlock()
		switch evt.Kind {
		case snowclaw.KindAppData:
			stored[evt.Tags.GetD()] = evt
		case snowclaw.KindDeletion:
			// the relay's delete hooks run while the request is
			// published; the record is remembered again just before
			for _, addr := range snowclaw.TagValues(evt, "a") {
				d := addr[strings.LastIndex(addr, ":"+a.pk+":")+len(a.pk)+2:]
				if old := stored[d]; old != nil {
					a.mem.Remember(restated)
					a.Deleted(snowclaw.ReadEvent(old))
					delete(stored, d)
				}
			}
		}
		return nil
	}
	it := memory.Item{Text: "the vault code is 5731", Tier: snowclaw.TierGroup, Group: "g", Subject: a.pk}
	first, _ := a.mem.Remember(it)
	restated = it
	if err := a.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	evt := stored[ItemD(first)]
	if evt == nil {
		t.Fatal("the item was not written")
	}

	// someone's look-alike of the agent's record
	fake := *evt
	fake.Tags = append(nostr.Tags{}, evt.Tags...)
	if err := fake.Sign(nostr.GeneratePrivateKey()); err != nil {
		t.Fatal(err)
	}
	a.Deleted(snowclaw.ReadEvent(&fake))
	if _, ok := a.mem.Item(first.ID); !ok {
		t.Fatal("deleting a look-alike made the agent forget")
	}

	// the agent forgets it, and it is restated while the deletion goes out
	a.mem.Forget(func(x memory.Item) bool { return x.ID == first.ID })
	if err := a.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.mem.Item(first.ID); !ok {
		t.Fatal("the agent's own deletion took the restated item out of RAM")
	}
	if err := a.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}

	// someone else deletes its event (a moderator): RAM follows
	evt = stored[ItemD(first)]
	if evt == nil {
		t.Fatal("the restated item was not written")
	}
	a.Deleted(snowclaw.ReadEvent(evt))
	if _, ok := a.mem.Item(first.ID); ok {
		t.Fatal("the item whose event was deleted is still in RAM")
	}
	if n := a.mem.Dirty(); n != 0 {
		t.Fatalf("%d records still to be written", n)
	}
}
