package remotesearch

import (
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// The one rule for what leaves, over every field of a REQ filter and
// every extension of its search: what is sent when the search may leave,
// and for the rest why it stays here.
func TestOutgoing(t *testing.T) {
	reader := "3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d"
	other := "82341f882b6eabcd2ba7f1ef90aad961cf074af15b9ef44a09f9d2a8fbfbe6a2"
	npub := "npub180cvv07tjdrrgpa0j7j7tmnyl2yr6yr7l8j4s3evf6u64th6gkwsyjh6w6"
	ts := nostr.Timestamp(1700000000)
	text := func(s string) nostr.Filter { return nostr.Filter{Search: s + " include:remote"} }
	for _, tc := range []struct {
		name string
		f    nostr.Filter
		sent string // the search sent; "" when it stays
		why  string
	}{
		// what leaves: the text and the public extensions
		{"text", text("airship fleet"), "airship fleet", ""},
		{"public extensions", text("airship topic:fleet/ops model:anthropic/* min_confidence:0.5 explain:true"), "airship topic:fleet/ops model:anthropic/* min_confidence:0.5", ""},
		{"since: and include:superseded", text("airship since:1700000000 include:superseded"), "airship since:1700000000", ""},
		{"tier:public", text("airship tier:public"), "airship", ""},
		{"kinds memory items", nostr.Filter{Kinds: []int{30078}, Search: "airship include:remote"}, "airship", ""},
		{"#t", nostr.Filter{Tags: nostr.TagMap{"t": {"fleet"}}, Search: "airship include:remote"}, "airship", ""},
		{"since and until", nostr.Filter{Since: &ts, Until: &ts, Search: "airship include:remote"}, "airship", ""},
		{"limit", nostr.Filter{Limit: 7, Search: "airship include:remote"}, "airship", ""},
		{"a short number", text("airship gate 4471"), "airship gate 4471", ""},
		{"someone else's key prefix", text("airship " + other[:8]), "airship " + other[:8], ""},

		// the filter's fields
		{"ids", nostr.Filter{IDs: []string{other}, Search: "airship include:remote"}, "", stayIDs},
		{"authors", nostr.Filter{Authors: []string{other}, Search: "airship include:remote"}, "", stayAuthors},
		{"the reader as author", nostr.Filter{Authors: []string{reader}, Search: "airship include:remote"}, "", stayAuthors},
		{"kinds group chat", nostr.Filter{Kinds: []int{9}, Search: "airship include:remote"}, "", stayKinds},
		{"kinds chat and memories", nostr.Filter{Kinds: []int{9, 30078}, Search: "airship include:remote"}, "", stayKinds},
		{"kinds DM", nostr.Filter{Kinds: []int{4}, Search: "airship include:remote"}, "", stayKinds},
		{"kinds notes", nostr.Filter{Kinds: []int{1}, Search: "airship include:remote"}, "", stayKinds},
		{"#h", nostr.Filter{Kinds: []int{30078}, Tags: nostr.TagMap{"h": {"crew"}}, Search: "airship include:remote"}, "", stayTag},
		{"#p", nostr.Filter{Tags: nostr.TagMap{"p": {other}}, Search: "airship include:remote"}, "", stayTag},
		{"#d", nostr.Filter{Tags: nostr.TagMap{"d": {"snow:memory:airship"}}, Search: "airship include:remote"}, "", stayTag},
		{"#e", nostr.Filter{Tags: nostr.TagMap{"e": {other}}, Search: "airship include:remote"}, "", stayTag},
		{"#t and #h", nostr.Filter{Tags: nostr.TagMap{"t": {"fleet"}, "h": {"crew"}}, Search: "airship include:remote"}, "", stayTag},
		{"an unknown tag", nostr.Filter{Tags: nostr.TagMap{"k": {"1"}}, Search: "airship include:remote"}, "", stayTag},

		// the search's extensions
		{"group:", text("airship group:crew"), "", stayGroup},
		{"tier:private", text("airship tier:private"), "", stayTier},
		{"tier:internal", text("airship tier:internal"), "", stayTier},
		{"tier:public tier:group", text("airship tier:public tier:group"), "", stayTier},
		{"source:", text("airship source:" + other), "", staySource},
		{"no search at all", nostr.Filter{Kinds: []int{30078}}, "", stayNoSearch},

		// the search's words
		{"an npub", text("what did " + npub + " say"), "", stayNamesKey},
		{"a nostr: URI (an unknown extension: dropped)", text("about nostr:" + npub), "about", ""},
		{"an nsec", text("nsec1vl029mgpspedva04g90vltkh6fvh240zqtv9k0t9af8935ke9laqsnlfe5 airship"), "", stayNamesKey},
		{"a hex key", text("airship " + other), "", stayNamesKey},
		{"a hex key in capitals", text("airship " + strings.ToUpper(other)), "", stayNamesKey},
		{"a note id", text("note1fntxtkcy9pjwucqwa9mddn7v03wwwsu9j330jj350nvhpky2tuaspk6nqc"), "", stayNamesKey},
		{"a card number", text("airship card 4111111111111111"), "", stayNamesKey},
		{"a key in a topic", text("airship topic:" + other[:20]), "", stayNamesKey},
		{"the reader's key shortened", text("airship notes of " + reader[:8]), "", stayReader},
	} {
		f, err := snowclaw.ReadFilter(tc.f)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		out, why := outgoing(reader, f)
		if why != tc.why {
			t.Errorf("%s: stays for %q, want %q", tc.name, why, tc.why)
			continue
		}
		if why == "" && out.String() != tc.sent {
			t.Errorf("%s: sent %q, want %q", tc.name, out.String(), tc.sent)
		}
	}
}

// The fallback for a relay without NIP-50: t tags from the query's words
// and topics, and the latest memory items; NIP-50 gets one search filter.
func TestFilters(t *testing.T) {
	q, _ := snowclaw.ParseSearch("Airship fleet refuels topic:ops at dawn")
	fs := filters(q, false, 50)
	if len(fs) != 2 || fs[0].Search != "" || fs[1].Search != "" {
		t.Fatalf("fallback %v", fs)
	}
	if want := []string{"ops", "airship", "fleet", "refuels", "dawn"}; !slices.Equal(fs[0].Tags["t"], want) {
		t.Fatalf("t tags %v, want %v", fs[0].Tags["t"], want)
	}
	if !slices.Equal(fs[1].Kinds, []int{snowclaw.KindAppData}) || fs[1].Limit != 50 || len(fs[1].Tags) != 0 {
		t.Fatalf("latest filter %v", fs[1])
	}
	fs = filters(q, true, 50)
	if len(fs) != 1 || fs[0].Search != "Airship fleet refuels at dawn topic:ops" {
		t.Fatalf("NIP-50 filter %v", fs)
	}
}

// What a remote may serve: a memory item public by its markers and by
// every claim it makes of itself.
func TestServable(t *testing.T) {
	sk := nostr.GeneratePrivateKey()
	person := "82341f882b6eabcd2ba7f1ef90aad961cf074af15b9ef44a09f9d2a8fbfbe6a2"
	mk := func(kind int, tags ...nostr.Tag) *nostr.Event {
		evt := &nostr.Event{Kind: kind, CreatedAt: nostr.Now(), Content: `{"summary":"airship"}`,
			Tags: append(nostr.Tags{{"d", "snow:memory:airship/x"}}, tags...)}
		evt.Sign(sk)
		return evt
	}
	for _, tc := range []struct {
		name string
		evt  *nostr.Event
		want bool
	}{
		{"public", mk(30078), true},
		{"tier public", mk(30078, nostr.Tag{"snow:tier", "public"}, nostr.Tag{"t", "airship"}), true},
		{"tier private, plaintext, p", mk(30078, nostr.Tag{"snow:tier", "private"}, nostr.Tag{"p", person}), false},
		{"tier private, plaintext", mk(30078, nostr.Tag{"snow:tier", "private"}), false},
		{"tier internal, plaintext", mk(30078, nostr.Tag{"snow:tier", "internal"}), false},
		{"tier group without h", mk(30078, nostr.Tag{"snow:tier", "group"}), false},
		{"tier without a value", mk(30078, nostr.Tag{"snow:tier"}), false},
		{"public and private claimed", mk(30078, nostr.Tag{"snow:tier", "public"}, nostr.Tag{"snow:tier", "private"}), false},
		{"h", mk(30078, nostr.Tag{"h", "crew"}), false},
		{"encrypted with p", mk(30078, nostr.Tag{"encrypted", "nip44"}, nostr.Tag{"p", person}), false},
		{"encrypted", mk(30078, nostr.Tag{"encrypted", "nip44"}), false},
		{"p", mk(30078, nostr.Tag{"p", person}), false},
		{"learnt from", mk(30078, nostr.Tag{"snow:learnt-from", person}), false},
		{"not a memory item", mk(1), false},
	} {
		if got := servable(tc.evt); got != tc.want {
			t.Errorf("%s: servable %v, want %v", tc.name, got, tc.want)
		}
	}
}
