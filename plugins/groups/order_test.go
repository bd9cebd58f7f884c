package groups_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/plugins/groups"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/relay"
)

// positioned is an accepted event and its position in the store's order.
type positioned struct {
	evt *nostr.Event
	pos int64
}

// randomHistory drives a world with n random moderation events of one
// group and returns those accepted, in the order (and with the
// positions) the store gave them.
func randomHistory(t *testing.T, rng *rand.Rand, n int) (*world, []positioned) {
	t.Helper()
	ctx := context.Background()
	w := newWorld(t)
	w.setup(t)
	people := []string{fz.owner, fz.creator, fz.mod, fz.member, fz.stranger}
	for range n {
		sk := people[rng.IntN(len(people))]
		target := pub(people[rng.IntN(len(people))])
		var tags nostr.Tags
		kind := []int{9000, 9000, 9001, 9001, 9002, 9002, 9009, 9010, 9021, 9021, 9022}[rng.IntN(11)]
		switch kind {
		case 9000:
			tags = nostr.Tags{h("club"), append(nostr.Tag{"p", target}, []string{"", "moderator", "admin"}[rng.IntN(3)])}
		case 9001:
			tags = nostr.Tags{h("club"), {"p", target}}
		case 9002:
			// a rename alone (a partial edit), or one naming some flags
			// (stating them all), a banner, a parent or none
			tags = nostr.Tags{h("club"), {"name", fmt.Sprint("n", rng.IntN(3))}}
			for _, f := range []string{"private", "public", "restricted", "closed", "open", "hidden", "visible"} {
				if rng.IntN(3) == 0 {
					tags = append(tags, nostr.Tag{f})
				}
			}
			if rng.IntN(2) == 0 {
				tags = append(tags, nostr.Tag{"banner", fmt.Sprint("b", rng.IntN(3))})
			}
			if rng.IntN(2) == 0 {
				tags = append(tags, nostr.Tag{"parent", "pub"})
			}
		case 9010:
			tags = nostr.Tags{h("club")}
			if rng.IntN(3) > 0 {
				tags = append(tags, nostr.Tag{"e", chatClub.ID})
			}
		case 9009:
			tags = nostr.Tags{h("club"), {"code", fmt.Sprint("c", rng.IntN(3))}}
		case 9021:
			tags = nostr.Tags{h("club"), {"code", []string{"abc", "c1", ""}[rng.IntN(3)]}}
		case 9022:
			tags = nostr.Tags{h("club")}
		}
		w.submit(ctx, signed(t, sk, kind, nostr.Now(), tags, fmt.Sprint(rng.Int())))
	}
	w.groups.Flush(ctx)
	// the positions the store gave the setup and the history
	var all []positioned
	err := storeEachInOrder(w, func(evt *nostr.Event, pos int64) {
		if snowclaw.IsGroupStateKind(evt.Kind) && snowclaw.ReadEvent(evt).Group == "club" {
			all = append(all, positioned{evt, pos})
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return w, all
}

// TestOrder_AnyArrivalOrderConverges: an instance applies its own events
// as it stores them and another instance's a moment later, so events
// reach it out of the store's order; whatever the order, the state is
// the one applying them in the store's order gives.
func TestOrder_AnyArrivalOrderConverges(t *testing.T) {
	for seed := range uint64(15) {
		rng := rand.New(rand.NewPCG(seed, 1))
		w, history := randomHistory(t, rng, 40)
		want, _ := w.groups.Snapshot("club")
		for shuffle := range 5 {
			got := groups.New(options(w.store))
			// the group's creation first (an event naming a group is only
			// accepted where its creation was applied), the rest shuffled
			// in windows of a few neighbours, as concurrent writes arrive
			order := slices.Clone(history)
			for i := 1; i < len(order); i++ {
				if j := i + rng.IntN(4); j < len(order) {
					order[i], order[j] = order[j], order[i]
				}
			}
			for _, p := range order {
				got.OnEventSaved(peer(p.pos), snowclaw.ReadEvent(p.evt))
			}
			g, ok := got.Snapshot("club")
			if !ok {
				t.Fatalf("seed %d shuffle %d: the group is gone", seed, shuffle)
			}
			if diff := groupDiff(want, g); diff != "" {
				t.Fatalf("seed %d shuffle %d: %s", seed, shuffle, diff)
			}
		}
	}
}

// peer is the context of another instance's change at pos: its state is
// applied, its consequences are that instance's.
func peer(pos int64) context.Context {
	return relay.WithPosition(relay.AsPeer(context.Background()), pos)
}

func storeEachInOrder(w *world, fn func(*nostr.Event, int64)) error {
	return eachInOrder(w.store, fn)
}

// TestOrder_SameSecondVersionWins: several changes within one second
// each leave their metadata in the store (a lower id wins NIP-01's tie),
// up to the per-second budget; the rest waits for the next second and is
// then written.
func TestOrder_SameSecondVersionWins(t *testing.T) {
	ctx := context.Background()
	frozen := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return frozen }
	w := newWorldOn(openBadger(t))
	w.groups = groups.New(withClock(options(w.store), clock))
	w.wire()
	w.setup(t) // two versions of pub's 39002 this second: its creation, a join
	g2 := w.groups
	held := -1
	for i := range 6 {
		u := nostr.GeneratePrivateKey()
		if reject, msg := w.submit(ctx, signed(t, u, snowclaw.KindJoinRequest, nostr.Now(), nostr.Tags{h("pub")}, "")); reject {
			t.Fatalf("join %d refused: %s", i, msg)
		}
		listed := listedMembers(t, w, "pub")
		g, _ := g2.Snapshot("pub")
		switch {
		case i < 2 && listed != len(g.Members):
			t.Fatalf("join %d in the same second: 39002 lists %d members, the state %d", i, listed, len(g.Members))
		case i == 1:
			held = listed
		case i > 1 && listed != held:
			t.Fatalf("join %d: 39002 lists %d members past the second's budget, want the %d of the 4th version", i, listed, held)
		}
	}
	mu.Lock()
	frozen = frozen.Add(time.Second)
	mu.Unlock()
	g2.Flush(ctx)
	g, _ := g2.Snapshot("pub")
	if listed := listedMembers(t, w, "pub"); listed != len(g.Members) {
		t.Fatalf("the next second: 39002 lists %d members, the state %d", listed, len(g.Members))
	}
}

func listedMembers(t *testing.T, w *world, gid string) int {
	t.Helper()
	ch, err := w.store.QueryEvents(context.Background(), nostr.Filter{Kinds: []int{snowclaw.KindGroupMembers}, Authors: []string{pub(fz.relay)}, Tags: nostr.TagMap{"d": {gid}}})
	if err != nil {
		t.Fatal(err)
	}
	n := -1
	for evt := range ch {
		n = countTags(evt, "p")
	}
	return n
}

// countTags is how many tags named name evt has.
func countTags(evt *nostr.Event, name string) int {
	n := 0
	for range evt.Tags.FindAll(name) {
		n++
	}
	return n
}

// TestOrder_BigGroupListFitsTheLimits: the relay's own 39002 obeys its
// size limits; a group too big for one event lists its first members by
// public key and says how many it leaves out.
func TestOrder_BigGroupListFitsTheLimits(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	w.setup(t)
	const joiners = 300
	lim := policies.DefaultLimits()
	lim.MaxTags = 100
	// g2 comes after w's instance: its clock (the wall clock, a while
	// ahead) is past every date w's ticking clock gave
	ahead := func() time.Time { return time.Now().Add(10 * time.Minute) }
	g2 := groups.New(withClock(withLimits(options(w.store), lim), ahead))
	if err := g2.Load(ctx); err != nil {
		t.Fatal(err)
	}
	w.groups = g2
	w.wire()
	for range joiners {
		if reject, msg := w.submit(ctx, signed(t, nostr.GeneratePrivateKey(), snowclaw.KindJoinRequest, nostr.Now(), nostr.Tags{h("pub")}, "")); reject {
			t.Fatal(msg)
		}
	}
	g2.Flush(ctx)
	ch, err := w.store.QueryEvents(ctx, nostr.Filter{Kinds: []int{snowclaw.KindGroupMembers}, Authors: []string{pub(fz.relay)}, Tags: nostr.TagMap{"d": {"pub"}}})
	if err != nil {
		t.Fatal(err)
	}
	list := <-ch
	if list == nil {
		t.Fatal("no 39002")
	}
	if err := lim.RejectEvent(ctx, snowclaw.ReadEvent(list)); err != nil {
		t.Fatalf("the relay's 39002 breaks its limits: %v", err)
	}
	g, _ := g2.Snapshot("pub")
	var all []string
	for pk := range g.Members {
		all = append(all, pk)
	}
	sort.Strings(all)
	var listed []string
	for tag := range list.Tags.FindAll("p") {
		listed = append(listed, tag[1])
	}
	if len(listed) != lim.MaxTags-1 || !slices.Equal(listed, all[:len(listed)]) {
		t.Fatalf("39002 lists %d members, want the first %d of %d by public key", len(listed), lim.MaxTags-1, len(all))
	}
	if !strings.Contains(list.Content, fmt.Sprintf("of %d", len(all))) {
		t.Fatalf("39002's content %q does not say how many members there are", list.Content)
	}
}

// FuzzStoredHistory: whatever group events a store holds (stored before a
// rule existed, or planted), loading them never panics and gives the
// same state in the store's order as applying them one by one as they
// were stored.
func FuzzStoredHistory(f *testing.F) {
	f.Add([]byte(`[[7,0,[["h","g"]]],[0,1,[["h","g"],["p","P1","admin"]]],[21,2,[["h","g"]]],[1,0,[["h","g"],["p","P2"]]],[8,0,[["h","g"]]],[7,3,[["h","g"],["closed"]]]]`))
	f.Add([]byte(`[[2,0,[["h","g"],["private"],["name"]]],[7,0,[["h","g"],["h","x"]]],[0,0,[["h","g"],["p"]]],[22,4,[["h","g"]]]]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var steps [][3]json.RawMessage
		if json.Unmarshal(data, &steps) != nil || len(steps) > 50 {
			return
		}
		ctx := context.Background()
		st := openBadger(t)
		live := groups.New(options(st))
		for _, s := range steps {
			var kind, signer int
			var tags nostr.Tags
			if json.Unmarshal(s[0], &kind) != nil || json.Unmarshal(s[1], &signer) != nil || json.Unmarshal(s[2], &tags) != nil {
				return
			}
			for _, tag := range tags {
				for i, v := range tag {
					if len(v) == 2 && v[0] == 'P' && v[1] >= '0' && v[1] <= '9' {
						tag[i] = pub(signers[int(v[1]-'0')%len(signers)])
					}
				}
			}
			evt := signed(t, signers[((signer%len(signers))+len(signers))%len(signers)], 9000+((kind%23)+23)%23, nostr.Now(), tags, "")
			pos, err := st.SaveSequenced(ctx, evt)
			if err != nil {
				continue
			}
			live.OnEventSaved(peer(pos), snowclaw.ReadEvent(evt))
		}
		rebuilt := groups.New(options(st))
		if err := rebuilt.Load(ctx); err != nil {
			t.Fatal(err)
		}
		ids, want := rebuilt.IDs(), live.IDs()
		sort.Strings(ids)
		sort.Strings(want)
		if !slices.Equal(ids, want) {
			t.Fatalf("loaded groups %v, applied %v", ids, want)
		}
		for _, gid := range ids {
			a, _ := live.Snapshot(gid)
			b, _ := rebuilt.Snapshot(gid)
			if diff := groupDiff(a, b); diff != "" {
				t.Fatalf("group %q: %s", gid, diff)
			}
		}
	})
}
