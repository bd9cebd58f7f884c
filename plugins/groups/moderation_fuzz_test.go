package groups_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/plugins/groups"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/relay"
	"github.com/snowclaw/snowclaw/relay/store"
)

// Fixed keys of the fuzz world. Signers are picked from them by index.
var fz = func() (k struct {
	owner, relay, agent, creator, mod, member, stranger string
	pub                                                 map[string]string // secret → public
}) {
	k.owner = secret(1)
	k.relay = secret(2)
	k.agent = secret(3)
	k.creator = secret(4)
	k.mod = secret(5)
	k.member = secret(6)
	k.stranger = secret(7)
	k.pub = map[string]string{}
	for _, sk := range []string{k.owner, k.relay, k.agent, k.creator, k.mod, k.member, k.stranger} {
		pk, err := nostr.GetPublicKey(sk)
		if err != nil {
			panic(err)
		}
		k.pub[sk] = pk
	}
	return k
}()

func secret(n int) string { return fmt.Sprintf("%064x", n) }

func pub(sk string) string { return fz.pub[sk] }

var signers = []string{fz.owner, fz.relay, fz.agent, fz.creator, fz.mod, fz.member, fz.stranger}

var nip01Prefixes = []string{"invalid", "blocked", "restricted", "auth-required", "rate-limited", "duplicate", "unsupported", "error", "pow"}

func checkRefusal(t *testing.T, msg string) {
	t.Helper()
	prefix, rest, ok := strings.Cut(msg, ": ")
	if !ok || !slices.Contains(nip01Prefixes, prefix) || strings.TrimSpace(rest) == "" {
		t.Fatalf("refusal %q does not start with a NIP-01 prefix (%s) followed by a reason", msg, strings.Join(nip01Prefixes, ": , "))
	}
}

// chat messages stored before the fuzzed event; fixed created_at, so
// their ids are known to the seed corpus.
var (
	chatPub  = &nostr.Event{Kind: snowclaw.KindChat, CreatedAt: 1700000000, Tags: nostr.Tags{{"h", "pub"}}, Content: "hello pub"}
	chatClub = &nostr.Event{Kind: snowclaw.KindChat, CreatedAt: 1700000001, Tags: nostr.Tags{{"h", "club"}}, Content: "hello club"}
)

func init() {
	for _, e := range []*nostr.Event{chatPub, chatClub} {
		if err := e.Sign(fz.member); err != nil {
			panic(err)
		}
	}
}

// world is a Groups on a real badger store, wired the way the relay wires
// it: publishing runs the event through the groups hooks and saves it,
// deleting removes it from the store, and the saved hook gets the event's
// position in the store's order. Its clock moves a second on every
// reading, so metadata is never held for the next second.
type world struct {
	store     eventstore.Store
	groups    *groups.Groups
	mu        sync.Mutex // published, when hooks run on several goroutines
	published []*nostr.Event
	setupAt   nostr.Timestamp // created_at of the setup events
	// beforePublish, when set, sees each event the plugin publishes
	// before it is stored (a test holds a write there)
	beforePublish func(*nostr.Event)
}

// tickingClock starts now and moves one second on every reading.
func tickingClock() func() time.Time { return tickingClockFrom(time.Now()) }

// tickingClockFrom is tickingClock starting at t.
func tickingClockFrom(t time.Time) func() time.Time {
	var mu sync.Mutex
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

// save stores evt, replacing older versions of replaceable and addressable
// events (NIP-01: the newest wins, on a tie the lowest id). It does not use
// slicestore's ReplaceEvent, which deletes while its own query goroutine
// still reads the slice (a data race under -race).
func save(ctx context.Context, st eventstore.Store, evt *nostr.Event) error {
	if nostr.IsReplaceableKind(evt.Kind) || nostr.IsAddressableKind(evt.Kind) {
		if err := replaceOlder(ctx, st, evt); err != nil {
			return err
		}
	}
	if _, err := saveAt(ctx, st, evt); err != nil && !errors.Is(err, eventstore.ErrDupEvent) {
		return err
	}
	return nil
}

// replaceOlder deletes the stored versions older than evt, or returns
// errNotNewer.
func replaceOlder(ctx context.Context, store eventstore.Store, evt *nostr.Event) error {
	if nostr.IsReplaceableKind(evt.Kind) || nostr.IsAddressableKind(evt.Kind) {
		f := nostr.Filter{Kinds: []int{evt.Kind}, Authors: []string{evt.PubKey}}
		if nostr.IsAddressableKind(evt.Kind) {
			f.Tags = nostr.TagMap{"d": {evt.Tags.GetD()}}
		}
		ch, err := store.QueryEvents(ctx, f)
		if err != nil {
			return err
		}
		var previous []*nostr.Event
		for p := range ch {
			previous = append(previous, p)
		}
		for _, p := range previous {
			if p.CreatedAt > evt.CreatedAt || (p.CreatedAt == evt.CreatedAt && p.ID <= evt.ID) {
				return errNotNewer // a newer (or the same) version is stored
			}
		}
		for _, p := range previous {
			if err := store.DeleteEvent(ctx, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// saveAt stores evt and returns the context its saved hooks run with:
// its position in the store's order, as the relay passes it.
func saveAt(ctx context.Context, st eventstore.Store, evt *nostr.Event) (context.Context, error) {
	if sq, ok := st.(store.Sequencer); ok {
		pos, err := sq.SaveSequenced(ctx, evt)
		if err != nil {
			return ctx, err
		}
		return relay.WithPosition(ctx, pos), nil
	}
	return ctx, st.SaveEvent(ctx, evt)
}

var errNotNewer = errors.New("a newer version is stored")

func options(store eventstore.Store) groups.Options {
	return groups.Options{
		IDs:         policies.Identities{Owner: pub(fz.owner), Relay: pub(fz.relay), Agent: pub(fz.agent)},
		RelaySecret: fz.relay,
		Creators:    []string{pub(fz.creator)},
		Defaults:    policies.GroupInfo{Private: true, Restricted: true},
		Limits:      policies.DefaultLimits(),
		Store:       store,
		Clock:       tickingClock(),
	}
}

func newWorld(t testing.TB) *world {
	return newWorldOn(openBadger(t))
}

func withClock(o groups.Options, clock func() time.Time) groups.Options {
	o.Clock = clock
	return o
}

func withLimits(o groups.Options, l policies.Limits) groups.Options {
	o.Limits = l
	return o
}

// eachInOrder hands fn every stored group event with its position.
func eachInOrder(st eventstore.Store, fn func(*nostr.Event, int64)) error {
	return store.EachInOrder(context.Background(), st, nostr.Filter{}, func(evt *nostr.Event, pos int64) bool {
		fn(evt, pos)
		return true
	})
}

// newWorldOn is a world over store, which is already open.
func newWorldOn(store eventstore.Store) *world {
	w := &world{store: store}
	w.groups = groups.New(options(w.store))
	w.wire()
	return w
}

// wire binds w.groups to the world's publish and delete paths.
func (w *world) wire() {
	store := w.store
	w.groups.Wire(func(ctx context.Context, evt *nostr.Event) error {
		if w.beforePublish != nil {
			w.beforePublish(evt)
		}
		w.mu.Lock()
		w.published = append(w.published, evt)
		w.mu.Unlock()
		if ok, err := evt.CheckSignature(); !ok || err != nil {
			return fmt.Errorf("relay published a badly signed event: %v", err)
		}
		if err := policies.DefaultLimits().RejectEvent(ctx, snowclaw.ReadEvent(evt)); err != nil {
			return fmt.Errorf("the relay's own event breaks its limits: %w", err)
		}
		if err := w.groups.RejectEvent(ctx, snowclaw.ReadEvent(evt)); err != nil {
			return err
		}
		ctx, err := w.saveAt(ctx, evt)
		if errors.Is(err, errNotNewer) || errors.Is(err, eventstore.ErrDupEvent) {
			return nil // stored already: no hook runs (as in the relay)
		}
		if err != nil {
			return err
		}
		w.groups.OnEventSaved(ctx, snowclaw.ReadEvent(evt))
		return nil
	}, func(ctx context.Context, evt *nostr.Event) error { return store.DeleteEvent(ctx, evt) })
}

// saveAt is save, returning the context of the event's saved hooks.
func (w *world) saveAt(ctx context.Context, evt *nostr.Event) (context.Context, error) {
	if nostr.IsReplaceableKind(evt.Kind) || nostr.IsAddressableKind(evt.Kind) {
		if err := replaceOlder(ctx, w.store, evt); err != nil {
			return ctx, err
		}
	}
	return saveAt(ctx, w.store, evt)
}

// submit runs a client's event through RejectTimeline and RejectEvent
// and, when accepted,
// stores it and hands it to OnEventSaved, as the relay does.
func (w *world) submit(ctx context.Context, evt *nostr.Event) (bool, string) {
	err := w.groups.RejectTimeline(ctx, snowclaw.ReadEvent(evt))
	if err == nil {
		err = w.groups.RejectEvent(ctx, snowclaw.ReadEvent(evt))
	}
	held := relay.HeldReason(err)
	if err != nil && held == nil {
		if _, typed := err.(*snowclaw.Error); !typed {
			panic("untyped refusal: " + err.Error())
		}
		return true, err.Error()
	}
	// a held event is stored and applied like an accepted one, and
	// answered with its reason (relay.Held)
	ctx, err = w.saveAt(ctx, evt)
	switch {
	case errors.Is(err, eventstore.ErrDupEvent) && held == nil:
		return false, "" // OK true, and no hook runs
	case errors.Is(err, eventstore.ErrDupEvent):
	case err != nil:
		return true, "error: " + err.Error()
	default:
		w.groups.OnEventSaved(ctx, snowclaw.ReadEvent(evt))
	}
	if held != nil {
		return true, held.Error()
	}
	return false, ""
}

func signed(t testing.TB, sk string, kind int, createdAt nostr.Timestamp, tags nostr.Tags, content string) *nostr.Event {
	evt := &nostr.Event{Kind: kind, CreatedAt: createdAt, Tags: tags, Content: content}
	if err := evt.Sign(sk); err != nil {
		t.Fatal(err)
	}
	return evt
}

// setup builds an open public group "pub" with a plain member and a closed
// private group "club" with a moderator and the invite code "abc", each
// with one chat message.
func (w *world) setup(t testing.TB) {
	ctx := context.Background()
	now := nostr.Now()
	w.setupAt = now
	steps := []struct {
		sk   string
		kind int
		tags nostr.Tags
	}{
		{fz.owner, snowclaw.KindCreateGroup, nostr.Tags{{"h", "pub"}, {"name", "Pub"}, {"public"}}},
		{fz.creator, snowclaw.KindCreateGroup, nostr.Tags{{"h", "club"}, {"closed"}, {"about", "members only"}}},
		{fz.member, snowclaw.KindJoinRequest, nostr.Tags{{"h", "pub"}}},
		{fz.creator, snowclaw.KindPutUser, nostr.Tags{{"h", "club"}, {"p", pub(fz.mod), "moderator"}}},
		{fz.creator, snowclaw.KindPutUser, nostr.Tags{{"h", "club"}, {"p", pub(fz.member)}}},
		{fz.mod, snowclaw.KindCreateInvite, nostr.Tags{{"h", "club"}, {"code", "abc"}}},
	}
	for i, st := range steps {
		evt := signed(t, st.sk, st.kind, now, st.tags, "")
		if reject, msg := w.submit(ctx, evt); reject {
			t.Fatalf("setup step %d (kind %d) refused: %s", i, st.kind, msg)
		}
	}
	for _, chat := range []*nostr.Event{chatPub, chatClub} {
		if err := save(ctx, w.store, chat); err != nil {
			t.Fatal(err)
		}
	}
}

// FuzzModerationEvent sends one fuzzed NIP-29 event (kinds 9000-9022, any
// tags and content, signed by one of the world's keys, up to ±9h off the
// clock) to a Groups with some state. It must never panic, every refusal
// must carry a NIP-01 prefix, the relay-signed metadata must mirror the
// state, and a restart (Load from the store) must rebuild the same state.
func FuzzModerationEvent(f *testing.F) {
	idx := func(sk string) uint8 { return uint8(slices.Index(signers, sk)) }
	for _, s := range []struct {
		kind   int
		signer string
		age    int16
		tags   string
	}{
		{9000, fz.owner, 0, `[["h","pub"],["p","` + pub(fz.stranger) + `","moderator"]]`},
		{9000, fz.mod, 0, `[["h","club"],["p","` + pub(fz.stranger) + `"]]`},
		{9000, fz.mod, 0, `[["h","club"],["p","` + pub(fz.stranger) + `","admin"]]`},
		{9000, fz.mod, 0, `[["h","club"],["p","` + strings.Repeat("z", 64) + `"]]`},
		{9000, fz.member, 0, `[["h","pub"],["p","` + pub(fz.member) + `","admin"]]`},
		{9000, fz.owner, 0, `[["h","pub"],["p"]]`},
		{9001, fz.creator, 0, `[["h","club"],["p","` + pub(fz.mod) + `"]]`},
		{9001, fz.mod, 0, `[["h","club"],["p","` + pub(fz.creator) + `"]]`},
		{9001, fz.owner, 0, `[["h","club"],["p","` + pub(fz.creator) + `"]]`},
		{9002, fz.creator, 0, `[["h","club"],["name","Club"],["picture","https://x/y.png"],["public"],["open"],["hidden"]]`},
		{9002, fz.creator, 0, `[["h","club"],["unrestricted"]]`},
		{9002, fz.creator, 0, `[["h","club"],["name"],["visible"],[]]`},
		{9002, fz.mod, 0, `[["h","club"],["name","mine"]]`},
		{9005, fz.mod, 0, `[["h","club"],["e","` + chatClub.ID + `"]]`},
		{9005, fz.mod, 0, `[["h","club"],["e","` + chatPub.ID + `"]]`},
		{9005, fz.owner, 0, `[["h","pub"],["e","` + chatPub.ID + `"],["e","nosuch"]]`},
		{9005, fz.owner, 0, `[["h","pub"]]`},
		{9007, fz.creator, 0, `[["h","new_group-1"],["name","New"],["private"],["closed"]]`},
		{9007, fz.stranger, 0, `[["h","mine"]]`},
		{9007, fz.owner, 0, `[["h","pub"]]`},
		{9007, fz.owner, 0, `[["h","bad id!"]]`},
		{9008, fz.creator, 0, `[["h","club"]]`},
		{9008, fz.mod, 0, `[["h","club"]]`},
		{9009, fz.mod, 0, `[["h","club"],["code","xyz"]]`},
		{9009, fz.mod, 0, `[["h","club"],["code",""]]`},
		{9009, fz.mod, 1800, `[["h","club"],["code","late"]]`},
		{9010, fz.owner, 0, `[["h","pub"]]`},
		{9021, fz.stranger, 0, `[["h","pub"]]`},
		{9021, fz.stranger, 0, `[["h","club"],["code","abc"]]`},
		{9021, fz.stranger, 0, `[["h","club"],["code","wrong"]]`},
		{9001, fz.mod, 0, `[["h","club"],["p","` + pub(fz.member) + `"]]`},
		{9021, fz.member, 0, `[["h","club"],["code","abc"]]`},
		{9021, fz.stranger, 0, `[["h","club"],["code","abc"],["h","pub"]]`},
		{9021, fz.stranger, 0, `[["h","club"]]`},
		{9021, fz.member, 0, `[["h","pub"]]`},
		{9021, fz.stranger, 0, `[["h","nosuch"]]`},
		{9022, fz.member, 0, `[["h","club"]]`},
		{9022, fz.mod, 0, `[["h","club"]]`},
		{9022, fz.creator, 0, `[["h","club"]]`},
		{9022, fz.stranger, 0, `[["h","pub"]]`},
		{9000, fz.owner, 4000, `[["h","pub"],["p","` + pub(fz.stranger) + `"]]`},
		{9000, fz.owner, -1000, `[["h","pub"],["p","` + pub(fz.stranger) + `"]]`},
		{9000, fz.owner, 0, `[]`},
		{9000, fz.owner, 0, `[["h"]]`},
		{9000, fz.owner, 0, `[["h",""],["h","pub"]]`},
	} {
		f.Add(uint8(s.kind-9000), idx(s.signer), s.age, s.tags, "")
	}
	f.Add(uint8(7), idx(fz.owner), int16(0), `[["h","x"]]`, strings.Repeat("\u0000\"\\", 10))

	f.Fuzz(func(t *testing.T, kindByte, signer uint8, age int16, tagsJSON, content string) {
		t.Parallel() // each input has a store of its own
		var tags nostr.Tags
		if err := json.Unmarshal([]byte(tagsJSON), &tags); err != nil {
			return
		}
		ctx := context.Background()
		w := newWorld(t)
		w.setup(t)
		kind := 9000 + int(kindByte)%23
		sk := signers[int(signer)%len(signers)]
		evt := signed(t, sk, kind, nostr.Now()-nostr.Timestamp(age), tags, content)

		w.published = nil
		reject, msg := w.submit(ctx, evt)
		if reject {
			checkRefusal(t, msg)
		} else if msg != "" {
			t.Fatalf("accepted with a message %q", msg)
		}
		w.checkMetadata(t)
		w.checkRestart(t, !reject && lostOnRestart(evt, w.setupAt))
	})
}

// checkMetadata: for every group, the stored relay-signed 39000-39002 say
// what the state says.
func (w *world) checkMetadata(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	w.groups.Flush(ctx)
	for _, gid := range w.groups.IDs() {
		g, _ := w.groups.Snapshot(gid)
		for _, kind := range []int{snowclaw.KindGroupMetadata, snowclaw.KindGroupAdmins, snowclaw.KindGroupMembers, snowclaw.KindGroupRoles} {
			ch, err := w.store.QueryEvents(ctx, nostr.Filter{Kinds: []int{kind}, Authors: []string{pub(fz.relay)}, Tags: nostr.TagMap{"d": {gid}}})
			if err != nil {
				t.Fatal(err)
			}
			var stored []*nostr.Event
			for e := range ch {
				stored = append(stored, e)
			}
			if len(stored) != 1 {
				t.Fatalf("group %q has %d stored kind %d events, want 1", gid, len(stored), kind)
			}
			if kind != snowclaw.KindGroupMembers {
				continue
			}
			var members []string
			for _, tag := range stored[0].Tags {
				if len(tag) >= 2 && tag[0] == "p" {
					members = append(members, tag[1])
				}
			}
			want := make([]string, 0, len(g.Members))
			for pk := range g.Members {
				want = append(want, pk)
			}
			sort.Strings(want)
			if !slices.Equal(members, want) {
				t.Fatalf("group %q: kind 39002 lists %v, state has %v", gid, members, want)
			}
		}
	}
}

// lostOnRestart reports the known loss tolerated by checkRestart: invite
// codes are not part of the relay-signed snapshot, and Load replays a
// create-invite dated before its group's creation (allowed: up to
// MaxModerationAge old) before the group exists, so the code is dropped
// (see the report of this test's author; plugins/groups/apply.go Load).
func lostOnRestart(evt *nostr.Event, groupCreated nostr.Timestamp) bool {
	return evt.Kind == snowclaw.KindCreateInvite && evt.CreatedAt < groupCreated
}

// checkRestart rebuilds the state from the store into a fresh Groups and
// compares it with the live one. With invitesMayShrink, invite codes the
// rebuilt state lacks are tolerated (lostOnRestart).
func (w *world) checkRestart(t *testing.T, invitesMayShrink bool) {
	t.Helper()
	w.groups.Flush(context.Background())
	var republished []*nostr.Event
	g2 := groups.New(options(w.store))
	if err := g2.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	g2.Wire(func(_ context.Context, evt *nostr.Event) error {
		republished = append(republished, evt)
		return nil
	}, func(_ context.Context, evt *nostr.Event) error {
		t.Errorf("a restart deleted kind %d %v", evt.Kind, evt.Tags)
		return nil
	})
	g2.Start(context.Background())
	g2.Flush(context.Background())
	g2.Close(context.Background())
	live, rebuilt := w.groups.IDs(), g2.IDs()
	sort.Strings(live)
	sort.Strings(rebuilt)
	if !slices.Equal(live, rebuilt) {
		t.Fatalf("after a restart the groups are %v, live they are %v", rebuilt, live)
	}
	for _, gid := range live {
		a, _ := w.groups.Snapshot(gid)
		b, _ := g2.Snapshot(gid)
		if invitesMayShrink {
			maps.DeleteFunc(a.Invites, func(code string, _ bool) bool { return !b.Invites[code] })
		}
		if diff := groupDiff(a, b); diff != "" {
			t.Fatalf("group %q differs after a restart: %s", gid, diff)
		}
	}
	if len(republished) > 0 {
		t.Fatalf("a restart republished %d metadata events: the stored metadata was stale (first: kind %d %v)", len(republished), republished[0].Kind, republished[0].Tags)
	}
}

func groupDiff(live, rebuilt groups.Group) string {
	if live.Name != rebuilt.Name || live.Picture != rebuilt.Picture || live.Banner != rebuilt.Banner || live.About != rebuilt.About || live.GroupInfo != rebuilt.GroupInfo || live.Parent != rebuilt.Parent {
		return fmt.Sprintf("metadata live %q %q %q %q %+v %q, rebuilt %q %q %q %q %+v %q",
			live.Name, live.Picture, live.Banner, live.About, live.GroupInfo, live.Parent, rebuilt.Name, rebuilt.Picture, rebuilt.Banner, rebuilt.About, rebuilt.GroupInfo, rebuilt.Parent)
	}
	if live.PinsSet != rebuilt.PinsSet || !slices.EqualFunc(live.Pins, rebuilt.Pins, slices.Equal) || !slices.Equal(live.ChildOrder, rebuilt.ChildOrder) {
		return fmt.Sprintf("lists live pins %v %v children %v, rebuilt %v %v %v", live.PinsSet, live.Pins, live.ChildOrder, rebuilt.PinsSet, rebuilt.Pins, rebuilt.ChildOrder)
	}
	if a, b := live.JoinedWith, rebuilt.JoinedWith; !maps.EqualFunc(a, b, slices.Equal) {
		return fmt.Sprintf("codes joined with live %v, rebuilt %v", a, b)
	}
	norm := func(m map[string][]string) map[string]string {
		out := make(map[string]string, len(m))
		for k, v := range m {
			out[k] = strings.Join(v, ",")
		}
		return out
	}
	if a, b := norm(live.Members), norm(rebuilt.Members); !maps.Equal(a, b) {
		return fmt.Sprintf("members (pubkey → roles) live %v, rebuilt %v", a, b)
	}
	if !maps.Equal(live.Invites, rebuilt.Invites) {
		return fmt.Sprintf("invites live %v, rebuilt %v", live.Invites, rebuilt.Invites)
	}
	for code := range live.Invites {
		if live.InviteValid(code) != rebuilt.InviteValid(code) {
			return fmt.Sprintf("invite %q valid live %v, rebuilt %v", code, live.InviteValid(code), rebuilt.InviteValid(code))
		}
	}
	if !maps.Equal(live.Removed, rebuilt.Removed) {
		return fmt.Sprintf("removed live %v, rebuilt %v", live.Removed, rebuilt.Removed)
	}
	return ""
}
