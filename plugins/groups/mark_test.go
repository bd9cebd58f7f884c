package groups

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fiatjaf/eventstore/slicestore"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/policies"
)

// A change whose metadata waits for the next second (this second's
// budget is spent) leaves its group marked. A write of the group's
// metadata that was under way when the change came read the state before
// it, so finishing must not clear that mark: the change's metadata would
// never be written.
func TestMark_SurvivesAWriteUnderWay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &slicestore.SliceStore{}
		if err := st.Init(); err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		relaySK, ownerSK := nostr.GeneratePrivateKey(), nostr.GeneratePrivateKey()
		relayPK, _ := nostr.GetPublicKey(relaySK)
		ownerPK, _ := nostr.GetPublicKey(ownerSK)
		now := time.Now()
		s := New(Options{IDs: policies.Identities{Owner: ownerPK, Relay: relayPK}, RelaySecret: relaySK,
			Limits: policies.DefaultLimits(), Store: st, Clock: func() time.Time { return now }})
		held, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		s.Wire(func(ctx context.Context, evt *nostr.Event) error {
			if evt.Kind == snowclaw.KindGroupRoles { // the write's last event
				once.Do(func() {
					close(held)
					<-release
				})
			}
			return st.SaveEvent(ctx, evt)
		}, func(ctx context.Context, evt *nostr.Event) error { return st.DeleteEvent(ctx, evt) })
		create := &nostr.Event{Kind: snowclaw.KindCreateGroup, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"h", "g"}}}
		if err := create.Sign(ownerSK); err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		s.apply(snowclaw.ReadEvent(create), 1)
		s.mu.Unlock()

		p := s.meta
		ctx := context.Background()
		p.mu.Lock()
		p.markLocked("g")
		p.mu.Unlock()
		wrote := make(chan bool)
		go func() { wrote <- p.write(ctx, "g", 0) }() // the loop's write
		<-held
		// meanwhile a change comes, in a second whose budget is spent
		p.mu.Lock()
		p.last["g"] = p.now()
		p.recent[recentKey{"g", snowclaw.KindGroupMembers}] = perSecond{at: p.now(), n: maxPerSecond}
		p.mu.Unlock()
		p.changed(ctx, "g")
		synctest.Wait()
		close(release)
		if !<-wrote {
			t.Fatal("the write under way failed")
		}
		if !p.isDirty("g") {
			t.Fatal("the write under way cleared the mark of a change it did not see")
		}
	})
}
