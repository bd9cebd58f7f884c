package node_test

import (
	"context"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/relay/store"
)

// Every start of a relay serves or says why: the group state is loaded
// without publishing anything, and the stored metadata is brought in
// line once the relay is wired (plugins/groups Start). Each case plants
// what a crash, an older release or an operator leaves, and restarts.

// startedGroup is a relay with group g, its owner and two members.
func startedGroup(t *testing.T, g string) (*testEnv, user, user) {
	t.Helper()
	e := startEnv(t)
	alice, bob := newUser(), newUser()
	oc := e.connect(&e.owner)
	e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", g}}, ""))
	e.mustPublish(oc, mkEvent(e.owner, 9000, nostr.Tags{{"h", g}, {"p", alice.pk}}, ""))
	e.mustPublish(oc, mkEvent(e.owner, 9000, nostr.Tags{{"h", g}, {"p", bob.pk}}, ""))
	return e, alice, bob
}

// withStore stops e and hands fn its store, then starts e again.
func (e *testEnv) withStore(fn func(st *store.Exact)) {
	e.t.Helper()
	e.stop()
	st, err := node.OpenStore(context.Background(), storeOptions(e.opts), e.dir, 0, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	fn(st)
	st.Close()
	e.start()
}

// membersListed is how many p tags g's stored 39002 holds (-1: none).
func (e *testEnv) membersListed(g string) int {
	meta := e.groupMeta(&e.owner, 39002, g)
	if meta == nil {
		return -1
	}
	return countP(meta)
}

// countP is how many p tags evt has.
func countP(evt *nostr.Event) int {
	n := 0
	for range evt.Tags.FindAll("p") {
		n++
	}
	return n
}

// The configuration makes an existing group encrypted at start
// ([groups] encrypted): the relay starts and says so in 39000.
func TestGroupsStart_ConfigEncryptsExistingGroup(t *testing.T) {
	e, _, _ := startedGroup(t, "vault")
	e.stop()
	e.opts.GroupsEncrypted = []string{"vault"}
	e.start()
	testwait.For(t, "39000 saying encrypted", func() bool {
		meta := e.groupMeta(&e.owner, 39000, "vault")
		return meta != nil && hasFlag(meta, "encrypted")
	})
}

// A deleted 39002 is published again with the members.
func TestGroupsStart_DeletedMemberListRepublished(t *testing.T) {
	e, _, _ := startedGroup(t, "crew")
	list := e.groupMeta(&e.owner, 39002, "crew")
	if list == nil {
		t.Fatal("no 39002 before the restart")
	}
	e.withStore(func(st *store.Exact) {
		if err := st.DeleteEvent(context.Background(), list); err != nil {
			t.Fatal(err)
		}
	})
	testwait.For(t, "the 39002 listing the owner and both members again", func() bool { return e.membersListed("crew") == 3 })
}

// Metadata dated ahead of the clock (an older release dated it so) is
// replaced by the state's, dated now.
func TestGroupsStart_FutureMetadataReplaced(t *testing.T) {
	e, _, _ := startedGroup(t, "crew")
	ahead := mkEvent(e.relay, 39002, nostr.Tags{{"d", "crew"}, {"p", e.owner.pk}}, "members of group crew")
	ahead.CreatedAt = nostr.Now() + 1800
	if err := ahead.Sign(e.relay.sk); err != nil {
		t.Fatal(err)
	}
	e.withStore(func(st *store.Exact) {
		if old := e.groupMetaOffline(st, "crew"); old != nil {
			if err := st.DeleteEvent(context.Background(), old); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.SaveEvent(context.Background(), &ahead); err != nil {
			t.Fatal(err)
		}
	})
	testwait.For(t, "a 39002 dated now listing the three members", func() bool {
		meta := e.groupMeta(&e.owner, 39002, "crew")
		return meta != nil && meta.CreatedAt <= nostr.Now() && countP(meta) == 3
	})
}

// A delete-group stored but not carried out (the relay stopped in
// between) is carried out at the next start, the request last.
func TestGroupsStart_UnfinishedDeletionFinished(t *testing.T) {
	e, alice, _ := startedGroup(t, "crew")
	msg := e.mustPublish(e.connect(&alice), mkEvent(alice, 9, nostr.Tags{{"h", "crew"}}, "hello"))
	del := mkEvent(e.owner, 9008, nostr.Tags{{"h", "crew"}}, "")
	e.withStore(func(st *store.Exact) {
		if err := st.SaveEvent(context.Background(), &del); err != nil {
			t.Fatal(err)
		}
	})
	if _, ok := e.n.Groups().Snapshot("crew"); ok {
		t.Fatal("the deleted group exists after the restart")
	}
	oc := e.connect(&e.owner)
	for _, id := range []string{msg.ID, del.ID} {
		if evs, _ := fetch(t, oc, nostr.Filter{IDs: []string{id}}); len(evs) != 0 {
			t.Fatalf("event %s of the deleted group is still stored", id[:8])
		}
	}
	testwait.For(t, "the deleted group's metadata gone", func() bool { return e.groupMeta(&e.owner, 39000, "crew") == nil })
}

// groupMetaOffline is g's stored 39002, read from an opened store.
func (e *testEnv) groupMetaOffline(st *store.Exact, g string) *nostr.Event {
	e.t.Helper()
	ch, err := st.QueryEvents(context.Background(), nostr.Filter{Kinds: []int{39002}, Authors: []string{e.relay.pk}, Tags: nostr.TagMap{"d": {g}}})
	if err != nil {
		e.t.Fatal(err)
	}
	var out *nostr.Event
	for evt := range ch {
		out = evt
	}
	return out
}
