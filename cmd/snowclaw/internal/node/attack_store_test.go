package node_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/relay/store"
)

// signedAt is mkEvent dated at ts.
func signedAt(u user, ts nostr.Timestamp, kind int, tags nostr.Tags, content string) nostr.Event {
	evt := nostr.Event{Kind: kind, Tags: tags, Content: content, CreatedAt: ts}
	if evt.Tags == nil {
		evt.Tags = nostr.Tags{}
	}
	if err := evt.Sign(u.sk); err != nil {
		panic(err)
	}
	return evt
}

// flood publishes evs over a few connections at once, without waiting for
// each OK before the next EVENT, and fails unless every one is accepted.
func flood(t *testing.T, e *testEnv, evs []nostr.Event) {
	t.Helper()
	const conns = 4
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i := range conns {
		part := evs[i*len(evs)/conns : (i+1)*len(evs)/conns]
		c := e.connect(nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := make(map[string]bool, len(part))
			for _, evt := range part {
				want[evt.ID] = true
				if err := c.Send("EVENT", evt); err != nil {
					errs <- err
					return
				}
			}
			read := 0
			var refused error
			// the bound is generous: a burst of thousands under -race
			all := testwait.Until(90*time.Second, func() bool {
				frames := c.Frames()
				for ; read < len(frames); read++ {
					var ok struct {
						label, id, reason string
						accepted          bool
					}
					var arr []json.RawMessage
					if json.Unmarshal(frames[read], &arr) != nil || len(arr) < 3 {
						continue
					}
					json.Unmarshal(arr[0], &ok.label)
					json.Unmarshal(arr[1], &ok.id)
					json.Unmarshal(arr[2], &ok.accepted)
					if len(arr) > 3 {
						json.Unmarshal(arr[3], &ok.reason)
					}
					if ok.label != "OK" || !want[ok.id] {
						continue
					}
					if !ok.accepted {
						refused = fmt.Errorf("burst event %s refused: %s", ok.id, ok.reason)
						return true
					}
					delete(want, ok.id)
				}
				return len(want) == 0
			})
			switch {
			case refused != nil:
				errs <- refused
			case !all:
				errs <- fmt.Errorf("%d burst events without an OK", len(want))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// junkID is an event id nothing has.
func junkID(seed string) string {
	b := make([]byte, 32)
	copy(b, "junk-"+seed)
	return hex.EncodeToString(b)
}

// burstSize is more than a store page (1,000) of each kind an internal
// job reads, all in one second.
const burstSize = 1100

// TestAttack_StoreBurstSecondLosesNothing is finding 1: the jobs that
// rebuild state at start paged by created_at alone, so once more than a
// page of their events shared one second every older one was skipped. The
// moderator of one group and a crowd of keys flood one second, newer than
// a private group's membership, a deletion and a memory; after a restart
// nothing older may be lost.
func TestAttack_StoreBurstSecondLosesNothing(t *testing.T) {
	e := startEnv(t, withSearch)
	alice, bob, mallory := newUser(), newUser(), newUser()
	now := nostr.Now()
	before, burst := now-120, now-60
	c := e.connect(nil)

	// older than the burst: a private group alice is in, her message, a
	// note bob deleted, a memory, a moderator's deletion in a public group
	e.mustPublish(c, signedAt(e.owner, before, 9007, nostr.Tags{{"h", "vault"}}, ""))
	e.mustPublish(c, signedAt(e.owner, before, 9000, nostr.Tags{{"h", "vault"}, {"p", alice.pk}}, ""))
	e.waitMembers("vault", e.owner.pk, alice.pk)
	e.mustPublish(c, signedAt(e.owner, before, 9007, nostr.Tags{{"h", "plaza"}}, ""))
	e.mustPublish(c, signedAt(e.owner, before, 9002, nostr.Tags{{"h", "plaza"}, {"public"}, {"restricted"}}, ""))
	plazaDel := e.mustPublish(c, signedAt(e.owner, before, 9005, nostr.Tags{{"h", "plaza"}, {"e", junkID("plaza")}}, ""))
	secret := e.mustPublish(c, signedAt(alice, before, 9, nostr.Tags{{"h", "vault"}}, "the vault code is 4711"))
	regret := e.mustPublish(c, signedAt(bob, before, 1, nil, "something bob regrets"))
	e.mustPublish(c, signedAt(bob, before, 5, nostr.Tags{{"e", regret.ID}}, ""))
	memo := e.mustPublish(c, signedAt(bob, before, 30078, nostr.Tags{{"d", "snow:memory:travel/zanzibar"}}, "the ferry to zanzibar leaves at dawn"))
	// mallory moderates a private group of her own
	e.mustPublish(c, signedAt(e.owner, before, 9007, nostr.Tags{{"h", "den"}}, ""))
	e.mustPublish(c, signedAt(e.owner, before, 9000, nostr.Tags{{"h", "den"}, {"p", mallory.pk, "moderator"}}, ""))
	e.waitMembers("den", e.owner.pk, mallory.pk)

	// the burst, all in one second: mallory's moderation deletions (read
	// back at start for group state and for deletions) and notes from
	// many keys (read back by the search rebuild)
	keys := make([]user, 20)
	for i := range keys {
		keys[i] = newUser()
	}
	var evs []nostr.Event
	for i := range burstSize {
		evs = append(evs,
			signedAt(mallory, burst, 9005, nostr.Tags{{"h", "den"}, {"e", junkID(fmt.Sprint(i))}}, ""),
			signedAt(keys[i%len(keys)], burst, 1, nil, fmt.Sprintf("flood %d", i)))
	}
	start := time.Now()
	flood(t, e, evs)
	t.Logf("burst of %d events stored in %s", len(evs), time.Since(start))

	e.restart()
	c = e.connect(nil)
	t.Run("member still reads the private group", func(t *testing.T) {
		got, closed := fetch(t, e.connect(&alice), nostr.Filter{Kinds: []int{9}, Tags: nostr.TagMap{"h": {"vault"}}})
		if closed != "" || !contains(got, secret.ID) {
			t.Fatalf("alice reads vault: %d events, CLOSED %q; want her message", len(got), closed)
		}
		if got, _ := fetch(t, e.connect(&mallory), nostr.Filter{Kinds: []int{9}, Tags: nostr.TagMap{"h": {"vault"}}}); len(got) != 0 {
			t.Fatal("a stranger reads the private group after the restart")
		}
		if m := e.groupMeta(&alice, 39002, "vault"); m == nil || !slices.Contains(pTags(m), alice.pk) {
			t.Fatalf("vault members after restart: %v", m)
		}
	})
	t.Run("deleted stays deleted", func(t *testing.T) {
		if err := publish(c, regret); err == nil || !strings.Contains(err.Error(), "msg: blocked:") {
			t.Fatalf("republishing a deleted note: %v, want a blocked: refusal", err)
		}
	})
	t.Run("COUNT counts everything", func(t *testing.T) {
		oc := e.connect(&e.owner) // the owner reads every group
		for _, tc := range []struct {
			f    nostr.Filter
			want int64
		}{
			{nostr.Filter{Kinds: []int{9005}}, burstSize + 1},
			{nostr.Filter{Kinds: []int{5, 9005}}, burstSize + 2},
			{nostr.Filter{Kinds: []int{1}}, burstSize}, // bob's note is deleted
			{nostr.Filter{Kinds: []int{9005}, Tags: nostr.TagMap{"h": {"den"}}}, burstSize},
		} {
			if n, closed := count(t, oc, tc.f); closed != "" || n != tc.want {
				t.Errorf("COUNT %v = %d (CLOSED %q), want %d", tc.f, n, closed, tc.want)
			}
		}
	})
	t.Run("REQ reads past a burst it may not see", func(t *testing.T) {
		// den is private: its deletions are hidden from a stranger, and
		// the one they may see is older than the burst
		got, closed := fetch(t, e.connect(&bob), nostr.Filter{Kinds: []int{9005}, Limit: 500})
		if closed != "" || !contains(got, plazaDel.ID) {
			t.Fatalf("stranger's REQ for deletions: %d events, CLOSED %q; want the public plaza one", len(got), closed)
		}
	})
	t.Run("reindex finds the old memory", func(t *testing.T) {
		e.opts.Search.ForceRebuild = true
		e.restart()
		got := search(t, e, nil, nostr.Filter{Search: "ferry zanzibar"})
		if !contains(got, memo.ID) {
			t.Fatalf("search after a forced rebuild: %v, want the memory stored before the burst", ids(got))
		}
	})
}

// TestAttack_TruncatedTableIsAClearError is finding 14's second half: a
// table file cut short (a full disk, a power cut, a bad copy) made badger
// panic inside its own goroutines at start, a raw trace instead of a
// reason. Opening must fail with an error naming the store and the file
// and saying what to do, whatever the damage.
func TestAttack_TruncatedTableIsAClearError(t *testing.T) {
	badgerOnly(t)
	for name, cut := range map[string]func(size int64) int64{
		"half":       func(size int64) int64 { return size / 2 },
		"footer off": func(size int64) int64 { return size - 3 },
		"a few byte": func(int64) int64 { return 5 },
		"empty":      func(int64) int64 { return 0 },
	} {
		t.Run(name, func(t *testing.T) {
			e := startEnv(t)
			c := e.connect(nil)
			var stored []string
			for i := range 20 {
				stored = append(stored, e.mustPublish(c, mkEvent(newUser(), 1, nil, fmt.Sprint("before the damage ", i))).ID)
			}
			e.stop() // badger writes its memtable out as an .sst on close
			tables, _ := filepath.Glob(filepath.Join(e.dir, "events", "*.sst"))
			if len(tables) == 0 {
				t.Fatal("no .sst after closing the store")
			}
			fi, err := os.Stat(tables[0])
			if err != nil {
				t.Fatal(err)
			}
			backup, err := os.ReadFile(tables[0])
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(tables[0], cut(fi.Size())); err != nil {
				t.Fatal(err)
			}

			n, err := node.New(context.Background(), e.opts)
			if err == nil {
				n.Close()
				t.Fatal("the relay started on a truncated table")
			}
			t.Log(err)
			if !errors.Is(err, store.ErrStoreDamaged) {
				t.Fatalf("err = %v, want ErrStoreDamaged", err)
			}
			for _, want := range []string{filepath.Join(e.dir, "events"), filepath.Base(tables[0]), "backup"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			if after, _ := os.Stat(tables[0]); after.Size() != cut(fi.Size()) {
				t.Errorf("the damaged file was changed: %d bytes, was %d", after.Size(), cut(fi.Size()))
			}
			// the refusal touched nothing else: with the table restored
			// from a backup, as the error advises, every event is back
			if err := os.WriteFile(tables[0], backup, fi.Mode()); err != nil {
				t.Fatal(err)
			}
			e.start()
			got, closed := fetch(t, e.connect(nil), nostr.Filter{IDs: stored})
			if closed != "" || !slices.Equal(slices.Sorted(slices.Values(ids(got))), slices.Sorted(slices.Values(stored))) {
				t.Fatalf("after restoring the table: %d of the %d events stored before the damage (CLOSED %q)", len(got), len(stored), closed)
			}
		})
	}
}

// The badger backend indexes tag values with no terminator: the range of
// d="note" also holds every d="note…". Its answers then carried events of
// other addresses, a limit (a replaceable address has a theoretical limit
// of one) could be spent on them, and its ReplaceEvent deleted the older
// versions of every address whose d tag the new one's is a prefix of.
// Every reader and writer now goes through store.Exact.
func TestAttack_TagPrefix_AddressesStayApart(t *testing.T) {
	e := startEnv(t)
	u := newUser()
	c := e.connect(&u)
	now := nostr.Now()
	note := e.mustPublish(c, signedAt(u, now-100, 30023, nostr.Tags{{"d", "note"}}, "note v1"))
	book := e.mustPublish(c, signedAt(u, now-90, 30023, nostr.Tags{{"d", "notebook"}}, "notebook v1"))

	// (a) the address's own event, though a newer "notebook" shares the
	// index range and the address's limit is one
	for _, f := range []nostr.Filter{
		{Kinds: []int{30023}, Authors: []string{u.pk}, Tags: nostr.TagMap{"d": {"note"}}},
		{Kinds: []int{30023}, Authors: []string{u.pk}, Tags: nostr.TagMap{"d": {"note"}}, Limit: 1},
		{Tags: nostr.TagMap{"d": {"note"}}, Limit: 1},
	} {
		if got, closed := fetch(t, c, f); len(got) != 1 || got[0].ID != note.ID {
			t.Fatalf("REQ %v: got %v (closed %q), want only the note", f, ids(got), closed)
		}
	}

	// (b) replacing "note" leaves "notebook" alone, and the other way round
	note2 := e.mustPublish(c, signedAt(u, now-80, 30023, nostr.Tags{{"d", "note"}}, "note v2"))
	want := func(what string, wantIDs ...string) {
		t.Helper()
		got, closed := fetch(t, c, nostr.Filter{Authors: []string{u.pk}})
		slices.Sort(wantIDs)
		if g := ids(got); !slices.Equal(slices.Sorted(slices.Values(g)), wantIDs) {
			t.Fatalf("%s: stored %v (closed %q), want %v", what, g, closed, wantIDs)
		}
	}
	want("after replacing note", note2.ID, book.ID)
	book2 := e.mustPublish(c, signedAt(u, now-70, 30023, nostr.Tags{{"d", "notebook"}}, "notebook v2"))
	want("after replacing notebook", note2.ID, book2.ID)
	// an older version of "note" is still refused: its newer one is found
	e.refusedWith(c, signedAt(u, now-85, 30023, nostr.Tags{{"d", "note"}}, "note v1.5"), "duplicate:")
	want("after a stale note", note2.ID, book2.ID)
}

// Groups "A" and "AB" share an index range too: #h:["A"] must not answer
// with (or spend its limit on) the chat of "AB", even for a member of
// both, and the group state rebuilt from the store keeps them apart.
func TestAttack_TagPrefix_GroupsStayApart(t *testing.T) {
	e := startEnv(t)
	alice, bob := newUser(), newUser()
	c := e.connect(&e.owner)
	e.mustPublish(c, mkEvent(e.owner, 9007, nostr.Tags{{"h", "A"}, {"open"}}, ""))
	e.mustPublish(c, mkEvent(e.owner, 9007, nostr.Tags{{"h", "AB"}, {"open"}}, ""))
	e.mustPublish(c, mkEvent(e.owner, 9000, nostr.Tags{{"h", "A"}, {"p", alice.pk}}, ""))
	e.waitMembers("A", e.owner.pk, alice.pk)
	e.mustPublish(c, mkEvent(e.owner, 9000, nostr.Tags{{"h", "AB"}, {"p", bob.pk}}, ""))
	e.waitMembers("AB", e.owner.pk, bob.pk)
	now := nostr.Now()
	inA := e.mustPublish(c, signedAt(e.owner, now-50, 9, nostr.Tags{{"h", "A"}}, "in A"))
	var inAB []string
	for i := range 5 {
		inAB = append(inAB, e.mustPublish(c, signedAt(e.owner, now-40+nostr.Timestamp(i), 9, nostr.Tags{{"h", "AB"}}, fmt.Sprint("in AB ", i))).ID)
	}
	for _, f := range []nostr.Filter{
		{Kinds: []int{9}, Tags: nostr.TagMap{"h": {"A"}}},
		{Kinds: []int{9}, Tags: nostr.TagMap{"h": {"A"}}, Limit: 1},
	} {
		if got, closed := fetch(t, c, f); len(got) != 1 || got[0].ID != inA.ID {
			t.Fatalf("REQ %v: got %v (closed %q), want only the message in A", f, ids(got), closed)
		}
	}
	// without a kind: A's moderation history too, and nothing of AB
	got, _ := fetch(t, c, nostr.Filter{Tags: nostr.TagMap{"h": {"A"}}})
	if !contains(got, inA.ID) {
		t.Fatal("REQ #h A misses the message in A")
	}
	for _, evt := range got {
		if g := evt.Tags.Find("h"); g == nil || g[1] != "A" {
			t.Fatalf("REQ #h A answers with %v", evt.Tags)
		}
	}
	if got, _ := fetch(t, c, nostr.Filter{Kinds: []int{9}, Tags: nostr.TagMap{"h": {"AB"}}}); len(got) != len(inAB) {
		t.Fatalf("REQ #h AB: got %d messages, want %d", len(got), len(inAB))
	}
	// the state of A is read back from its own 39002, not AB's newer one
	e.restart()
	e.waitMembers("A", e.owner.pk, alice.pk)
	e.waitMembers("AB", e.owner.pk, bob.pk)
}
