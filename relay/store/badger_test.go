package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/relay/store"
)

func newKey(t *testing.T) string {
	t.Helper()
	pk, err := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	if err != nil {
		t.Fatal(err)
	}
	return pk
}

func contents(evs []*nostr.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Content
	}
	return out
}

func query(t *testing.T, s *store.Exact, f nostr.Filter) []string {
	t.Helper()
	ch, err := s.QueryEvents(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for evt := range ch {
		got = append(got, evt.Content)
	}
	return got
}

// TestExact_TagValues: every kind of tag value badger indexes (plain, a
// 32-byte hex, an address) answers with exactly its own events, newest
// first, whatever longer values share its prefix.
func TestExact_TagValues(t *testing.T) {
	b := openStore(t)
	x := store.NewExact(b)
	pk, other := newKey(t), newKey(t)
	hexA := strings.Repeat("ab", 32)
	hexB := strings.Repeat("ab", 8) + strings.Repeat("cd", 24) // same first 8 bytes
	put(t, b, pk, 9, 100, nostr.Tags{{"h", "A"}}, "group A")
	put(t, b, pk, 9, 101, nostr.Tags{{"h", "AB"}}, "group AB")
	put(t, b, pk, 9, 102, nostr.Tags{{"h", "ABC"}}, "group ABC")
	put(t, b, pk, 1, 103, nostr.Tags{{"a", "30023:" + other + ":note"}}, "names note")
	put(t, b, pk, 1, 104, nostr.Tags{{"a", "30023:" + other + ":notebook"}}, "names notebook")
	put(t, b, pk, 1, 105, nostr.Tags{{"e", hexA}}, "names hexA")
	put(t, b, pk, 1, 106, nostr.Tags{{"e", hexB}}, "names hexB")
	put(t, b, pk, 1, 107, nostr.Tags{{"t", "x"}, {"t", "xy"}}, "x and xy")
	put(t, b, pk, 1, 108, nostr.Tags{{"t", "xyz"}}, "xyz")
	put(t, b, pk, 1, 109, nostr.Tags{{"p", "x"}}, "x, but as p")

	for _, c := range []struct {
		name string
		f    nostr.Filter
		want []string
	}{
		{"h A", nostr.Filter{Tags: nostr.TagMap{"h": {"A"}}}, []string{"group A"}},
		{"h A limit 1", nostr.Filter{Tags: nostr.TagMap{"h": {"A"}}, Limit: 1}, []string{"group A"}},
		{"h A with kind", nostr.Filter{Kinds: []int{9}, Tags: nostr.TagMap{"h": {"A"}}, Limit: 1}, []string{"group A"}},
		{"h AB", nostr.Filter{Tags: nostr.TagMap{"h": {"AB"}}}, []string{"group AB"}},
		{"h A and ABC", nostr.Filter{Tags: nostr.TagMap{"h": {"ABC", "A"}}}, []string{"group ABC", "group A"}},
		{"a note", nostr.Filter{Tags: nostr.TagMap{"a": {"30023:" + other + ":note"}}, Limit: 1}, []string{"names note"}},
		{"e hexA", nostr.Filter{Tags: nostr.TagMap{"e": {hexA}}, Limit: 1}, []string{"names hexA"}},
		{"t x and xy, once", nostr.Filter{Tags: nostr.TagMap{"t": {"x", "xy"}}}, []string{"x and xy"}},
		{"t x limit 1", nostr.Filter{Tags: nostr.TagMap{"t": {"x"}}, Limit: 1}, []string{"x and xy"}},
		{"p x", nostr.Filter{Tags: nostr.TagMap{"p": {"x"}}}, []string{"x, but as p"}},
		{"two tags", nostr.Filter{Tags: nostr.TagMap{"t": {"x"}, "p": {"x"}}}, nil},
		{"empty tag list", nostr.Filter{Tags: nostr.TagMap{"t": {}}}, nil},
	} {
		if got := query(t, x, c.f); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// TestExact_IDs: an ids filter still honours since, until, kinds and the
// limit, and an id named twice (or malformed) changes nothing.
func TestExact_IDs(t *testing.T) {
	b := openStore(t)
	x := store.NewExact(b)
	pk := newKey(t)
	var ids []string
	for i := range 5 {
		ids = append(ids, put(t, b, pk, 1+i%2, nostr.Timestamp(100+i), nil, fmt.Sprint(i)).ID)
	}
	ts := func(v nostr.Timestamp) *nostr.Timestamp { return &v }
	for _, c := range []struct {
		name string
		f    nostr.Filter
		want []string
	}{
		{"all", nostr.Filter{IDs: ids}, []string{"4", "3", "2", "1", "0"}},
		{"since until", nostr.Filter{IDs: ids, Since: ts(101), Until: ts(103)}, []string{"3", "2", "1"}},
		{"kind", nostr.Filter{IDs: ids, Kinds: []int{2}}, []string{"3", "1"}},
		{"limit", nostr.Filter{IDs: append(ids, ids[4], "zz"), Limit: 2}, []string{"4", "3"}},
		{"none", nostr.Filter{IDs: []string{}}, nil},
	} {
		if got := query(t, x, c.f); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// TestExact_SinceWithImpostors: the keys of a longer value can sort
// between a value's own (its bytes compare against their created_at), and
// badger ends a walk at the first key whose last bytes read as older than
// since, an impostor's included; the walk must go on to the real events.
func TestExact_SinceWithImpostors(t *testing.T) {
	b := openStore(t)
	x := store.NewExact(b)
	pk := newKey(t)
	const newer, older = 0x6553F100, 0x65530100 // "eS\xf1\x00", "eS\x01\x00"
	put(t, b, pk, 1, newer, nostr.Tags{{"t", "hi"}}, "newer")
	put(t, b, pk, 1, older, nostr.Tags{{"t", "hi"}}, "older")
	for i := range 50 {
		// "eSz" sorts between the two created_ats; these are ancient
		put(t, b, pk, 1, nostr.Timestamp(1000+i), nostr.Tags{{"t", fmt.Sprintf("hieSz%d", i)}}, "impostor")
	}
	since := nostr.Timestamp(older)
	got := query(t, x, nostr.Filter{Tags: nostr.TagMap{"t": {"hi"}}, Since: &since})
	if !slices.Equal(got, []string{"newer", "older"}) {
		t.Errorf("got %q, want both events tagged hi", got)
	}
}

// TestExact_BurstWithImpostors pages a second of thousands of events,
// their tag values interleaved with a longer one, with pages smaller than
// the second: every match once, no impostor.
func TestExact_BurstWithImpostors(t *testing.T) {
	b := openStore(t)
	pk := newKey(t)
	var want []*nostr.Event
	for i := range 3000 {
		e := put(t, b, pk, 1+i%2, burst, nostr.Tags{{"t", "x"}}, fmt.Sprint("x ", i))
		put(t, b, pk, 1, burst, nostr.Tags{{"t", "x" + fmt.Sprint(i%10)}}, fmt.Sprint("impostor ", i))
		want = append(want, e)
	}
	older := put(t, b, pk, 1, burst-1, nostr.Tags{{"t", "x"}}, "older")
	for _, size := range []int{7, 1000} {
		var got []*nostr.Event
		err := store.Scan(context.Background(), b, nostr.Filter{Tags: nostr.TagMap{"t": {"x"}}}, size, func(e *nostr.Event) bool {
			got = append(got, e)
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		sameOnce(t, got, append(slices.Clone(want), older))
	}
	got, err := store.All(context.Background(), b, nostr.Filter{Kinds: []int{2}, Tags: nostr.TagMap{"t": {"x"}}})
	if err != nil {
		t.Fatal(err)
	}
	var kind2 []*nostr.Event
	for _, e := range want {
		if e.Kind == 2 {
			kind2 = append(kind2, e)
		}
	}
	sameOnce(t, got, kind2)
}

// TestExact_ReplaceOddAddresses: a d tag badger does not index (over 100
// bytes) and a missing one (which is d="") are addresses too: replacing
// them removes their older versions and nothing else.
func TestExact_ReplaceOddAddresses(t *testing.T) {
	ctx := context.Background()
	b := openStore(t)
	x := store.NewExact(b)
	pk := newKey(t)
	long := strings.Repeat("l", 150)
	put(t, b, pk, 30078, 100, nostr.Tags{{"d", long}}, "long v1")
	put(t, b, pk, 30078, 100, nil, "none v1")
	put(t, b, pk, 30078, 100, nostr.Tags{{"d", "x"}}, "x v1")
	for _, c := range []struct {
		tags    nostr.Tags
		content string
	}{{nostr.Tags{{"d", long}}, "long v2"}, {nostr.Tags{}, "none v2"}} {
		evt := &nostr.Event{PubKey: pk, Kind: 30078, CreatedAt: 101, Tags: c.tags, Content: c.content, Sig: strings.Repeat("0", 128)}
		evt.ID = evt.GetID()
		if err := x.ReplaceEvent(ctx, evt); err != nil {
			t.Fatal(err)
		}
	}
	all, err := store.All(ctx, b, nostr.Filter{Authors: []string{pk}})
	if err != nil {
		t.Fatal(err)
	}
	got := contents(all)
	slices.Sort(got)
	if want := []string{"long v2", "none v2", "x v1"}; !slices.Equal(got, want) {
		t.Errorf("after replacing: %q, want %q", got, want)
	}
}
