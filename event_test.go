package snowclaw_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// TestReadEvent_Tags is the one reading of every tag a rule decides by,
// fed the shapes an attacker writes: two of a tag where one is meant, a
// tag without a value, an empty value, and the encrypted markers in every
// form. What ReadEvent says here is what the write rule enforces and what
// every reader scopes by.
func TestReadEvent_Tags(t *testing.T) {
	type want struct {
		group    string
		groupErr error
		d        string
		ns       snowclaw.Namespace
		subject  string
		enc      bool
		sealed   bool
		mentions bool
		tier     snowclaw.Tier
		p        []string
		exp      nostr.Timestamp
		expires  bool
	}
	alice, bob := key('1'), key('2')
	for _, tc := range []struct {
		name string
		kind int
		tags nostr.Tags
		want want
	}{
		{"no tags", 1, nil, want{tier: snowclaw.TierPublic}},
		{"one group", 9, nostr.Tags{{"h", "A"}}, want{group: "A", tier: snowclaw.TierGroup}},
		{"relay hint after the group", 9, nostr.Tags{{"h", "A", "wss://x"}}, want{group: "A", tier: snowclaw.TierGroup}},
		{"H is another tag", 9, nostr.Tags{{"H", "A"}}, want{tier: snowclaw.TierPublic}},
		{"two groups", 9, nostr.Tags{{"h", "A"}, {"h", "B"}},
			want{group: snowclaw.MalformedGroup, groupErr: snowclaw.ErrMultipleGroups, tier: snowclaw.TierGroup}},
		{"one group twice", 9, nostr.Tags{{"h", "A"}, {"h", "A"}},
			want{group: snowclaw.MalformedGroup, groupErr: snowclaw.ErrMultipleGroups, tier: snowclaw.TierGroup}},
		{"an empty h before a group", 9, nostr.Tags{{"h", ""}, {"h", "B"}},
			want{group: snowclaw.MalformedGroup, groupErr: snowclaw.ErrMultipleGroups, tier: snowclaw.TierGroup}},
		{"a valueless h after a group", 9, nostr.Tags{{"h", "A"}, {"h"}},
			want{group: snowclaw.MalformedGroup, groupErr: snowclaw.ErrMultipleGroups, tier: snowclaw.TierGroup}},
		{"only an empty h", 9, nostr.Tags{{"h", ""}},
			want{group: snowclaw.MalformedGroup, groupErr: snowclaw.ErrEmptyGroup, tier: snowclaw.TierGroup}},
		{"only a valueless h", 9, nostr.Tags{{"h"}},
			want{group: snowclaw.MalformedGroup, groupErr: snowclaw.ErrEmptyGroup, tier: snowclaw.TierGroup}},
		{"empty tag arrays are skipped", 9, nostr.Tags{{}, {"h", "A"}, {}}, want{group: "A", tier: snowclaw.TierGroup}},

		{"a memory item", snowclaw.KindAppData, nostr.Tags{{"d", "snow:memory:x/y"}},
			want{d: "snow:memory:x/y", ns: snowclaw.NamespaceMemoryItem, subject: "x/y", tier: snowclaw.TierPublic}},
		// NIP-01's address and every store take the first d with a
		// value: so does the namespace the write rule judges
		{"two d tags: the first counts", snowclaw.KindAppData, nostr.Tags{{"d", "snow:memory:x"}, {"d", snowclaw.DTagConfigGlobal}},
			want{d: "snow:memory:x", ns: snowclaw.NamespaceMemoryItem, subject: "x", tier: snowclaw.TierPublic}},
		{"two d tags, config first", snowclaw.KindAppData, nostr.Tags{{"d", snowclaw.DTagConfigGlobal}, {"d", "snow:memory:x"}},
			want{d: snowclaw.DTagConfigGlobal, ns: snowclaw.NamespaceConfig, subject: "global", tier: snowclaw.TierPublic}},
		{"a valueless d does not hide the next", snowclaw.KindAppData, nostr.Tags{{"d"}, {"d", snowclaw.DTagConfigGlobal}},
			want{d: snowclaw.DTagConfigGlobal, ns: snowclaw.NamespaceConfig, subject: "global", tier: snowclaw.TierPublic}},
		{"an empty d is the d", snowclaw.KindAppData, nostr.Tags{{"d", ""}, {"d", snowclaw.DTagConfigGlobal}},
			want{tier: snowclaw.TierPublic}},
		{"a namespace only counts on kind 30078", 30023, nostr.Tags{{"d", snowclaw.DTagConfigGlobal}},
			want{d: snowclaw.DTagConfigGlobal, tier: snowclaw.TierPublic}},
		{"the agent's record of a group", snowclaw.KindAppData, nostr.Tags{{"d", "snowclaw:memory:group:A"}, {"h", "A"}},
			want{group: "A", d: "snowclaw:memory:group:A", ns: snowclaw.NamespaceMemoryGroup, subject: "A", tier: snowclaw.TierGroup}},

		{"nip44 to a person: private", snowclaw.KindAppData, nostr.Tags{{"encrypted", "nip44"}, {"p", alice}},
			want{enc: true, tier: snowclaw.TierPrivate, p: []string{alice}}},
		{"nip44 to nobody: internal", snowclaw.KindAppData, nostr.Tags{{"encrypted", "nip44"}},
			want{enc: true, tier: snowclaw.TierInternal}},
		{"a valueless marker still encrypts", snowclaw.KindAppData, nostr.Tags{{"encrypted"}},
			want{enc: true, tier: snowclaw.TierInternal}},
		{"an empty marker still encrypts", snowclaw.KindAppData, nostr.Tags{{"encrypted", ""}, {"h", "A"}},
			want{group: "A", enc: true, tier: snowclaw.TierInternal}},
		{"an unknown scheme still encrypts", snowclaw.KindAppData, nostr.Tags{{"encrypted", "rot13"}, {"h", "A"}},
			want{group: "A", enc: true, tier: snowclaw.TierInternal}},
		{"Encrypted is another tag", snowclaw.KindAppData, nostr.Tags{{"Encrypted", "nip44"}},
			want{tier: snowclaw.TierPublic}},
		{"a group seal", snowclaw.KindAppData, nostr.Tags{{"encrypted", "nip44-group"}, {"h", "A"}},
			want{group: "A", enc: true, sealed: true, mentions: true, tier: snowclaw.TierGroup}},
		{"a group seal twice", snowclaw.KindAppData, nostr.Tags{{"encrypted", "nip44-group"}, {"encrypted", "nip44-group"}, {"h", "A"}},
			want{group: "A", enc: true, sealed: true, mentions: true, tier: snowclaw.TierGroup}},
		{"a group seal beside nip44: the agent's only", snowclaw.KindAppData, nostr.Tags{{"encrypted", "nip44-group"}, {"encrypted", "nip44"}, {"h", "A"}},
			want{group: "A", enc: true, mentions: true, tier: snowclaw.TierInternal}},
		{"a group seal beside a valueless marker", snowclaw.KindAppData, nostr.Tags{{"encrypted"}, {"encrypted", "nip44-group"}, {"h", "A"}},
			want{group: "A", enc: true, mentions: true, tier: snowclaw.TierInternal}},
		{"a group seal without a group", snowclaw.KindAppData, nostr.Tags{{"encrypted", "nip44-group"}},
			want{enc: true, sealed: true, mentions: true, tier: snowclaw.TierInternal}},
		{"a group seal in two groups", snowclaw.KindAppData, nostr.Tags{{"encrypted", "nip44-group"}, {"h", "A"}, {"h", "B"}},
			want{group: snowclaw.MalformedGroup, groupErr: snowclaw.ErrMultipleGroups, enc: true, sealed: true, mentions: true, tier: snowclaw.TierGroup}},
		{"a group seal naming a person is private", snowclaw.KindAppData, nostr.Tags{{"encrypted", "nip44-group"}, {"h", "A"}, {"p", alice}},
			want{group: "A", enc: true, sealed: true, mentions: true, tier: snowclaw.TierPrivate, p: []string{alice}}},

		{"p tags in order, valueless skipped", 9, nostr.Tags{{"p", bob}, {"p"}, {"p", alice}, {"p", bob}},
			want{tier: snowclaw.TierPublic, p: []string{bob, alice, bob}}},
		{"a p tag without encryption is a mention", snowclaw.KindAppData, nostr.Tags{{"p", alice}},
			want{tier: snowclaw.TierPublic, p: []string{alice}}},

		{"an expiration", 1, nostr.Tags{{"expiration", "1700000000"}}, want{tier: snowclaw.TierPublic, exp: 1700000000, expires: true}},
		{"the first expiration counts", 1, nostr.Tags{{"expiration", "5"}, {"expiration", "1700000000"}},
			want{tier: snowclaw.TierPublic, exp: 5, expires: true}},
		{"a valueless expiration is skipped", 1, nostr.Tags{{"expiration"}, {"expiration", "5"}},
			want{tier: snowclaw.TierPublic, exp: 5, expires: true}},
		{"an unreadable expiration is none", 1, nostr.Tags{{"expiration", "soon"}, {"expiration", "5"}},
			want{tier: snowclaw.TierPublic}},
		{"expiration zero expired long ago", 1, nostr.Tags{{"expiration", "0"}}, want{tier: snowclaw.TierPublic, expires: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := snowclaw.ReadEvent(&nostr.Event{Kind: tc.kind, Tags: tc.tags})
			got := want{e.Group, e.GroupErr, e.D, e.Namespace, e.Subject, e.Encrypted, e.GroupSealed, e.MentionsGroupSeal, e.Tier, e.P, e.Expiration, e.Expires}
			if !errors.Is(got.groupErr, tc.want.groupErr) || (got.groupErr == nil) != (tc.want.groupErr == nil) {
				t.Fatalf("GroupErr %v, want %v", got.groupErr, tc.want.groupErr)
			}
			if !slices.Equal(got.p, tc.want.p) {
				t.Fatalf("P %q, want %q", got.p, tc.want.p)
			}
			got.groupErr, got.p = tc.want.groupErr, tc.want.p
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("read %+v\nwant %+v", got, tc.want)
			}
		})
	}
	if snowclaw.ReadEvent(nil) != nil {
		t.Fatal("nil read as an event")
	}
}

func TestReadEvent_NamesGroup(t *testing.T) {
	e := snowclaw.ReadEvent(&nostr.Event{Tags: nostr.Tags{{"h", ""}, {"h", "A"}, {"h"}, {"h", "B"}}})
	for g, want := range map[string]bool{"A": true, "B": true, "C": false, "": false} {
		if got := e.NamesGroup(g); got != want {
			t.Errorf("NamesGroup(%q) = %v, want %v", g, got, want)
		}
	}
	if e.Group != snowclaw.MalformedGroup {
		t.Errorf("group %q: an event naming several groups is in none of them", e.Group)
	}
}

func TestReadEvent_Expired(t *testing.T) {
	e := snowclaw.ReadEvent(&nostr.Event{Tags: nostr.Tags{{"expiration", "100"}}})
	if e.Expired(99) || !e.Expired(100) || !e.Expired(101) {
		t.Fatal("expired strictly before its expiration, or not at it")
	}
	if snowclaw.ReadEvent(&nostr.Event{}).Expired(1 << 40) {
		t.Fatal("an event without expiration expired")
	}
}

func TestReadEvent_Names(t *testing.T) {
	e := snowclaw.ReadEvent(&nostr.Event{Tags: nostr.Tags{{"p", ""}, {"p", key('1')}}})
	if !e.Names(key('1')) || e.Names("") || e.Names(key('2')) {
		t.Fatal("Names: alice named, nobody else, and never the anonymous reader")
	}
}

// TestEvent_Person: whose private memory an event is comes from its
// signature, never from a p tag alone.
func TestEvent_Person(t *testing.T) {
	agent, alice, mallory := key('a'), key('1'), key('2')
	enc := nostr.Tag{"encrypted", "nip44"}
	for _, tc := range []struct {
		name, author string
		tags         nostr.Tags
		want         string
		ok           bool
	}{
		{"agent writes Alice's memory", agent, nostr.Tags{{"p", alice}, enc}, alice, true},
		{"Alice writes her own", alice, nostr.Tags{{"p", alice}, enc}, alice, true},
		{"Alice's p repeated", alice, nostr.Tags{{"p", alice}, {"p", alice}, enc}, alice, true},
		{"Mallory forges one for Alice", mallory, nostr.Tags{{"p", alice}, enc}, "", false},
		{"Mallory names herself too", mallory, nostr.Tags{{"p", alice}, {"p", mallory}, enc}, "", false},
		{"Mallory names herself first", mallory, nostr.Tags{{"p", mallory}, {"p", alice}, enc}, "", false},
		{"agent names two people", agent, nostr.Tags{{"p", alice}, {"p", mallory}, enc}, "", false},
		{"uppercase hex is not canonical", agent, nostr.Tags{{"p", strings.ToUpper(strings.Repeat("b", 64))}, enc}, "", false},
		{"npub form is not canonical", agent, nostr.Tags{{"p", snowclaw.NpubOf(alice)}, enc}, "", false},
		{"not encrypted", agent, nostr.Tags{{"p", alice}}, "", false},
		{"no p tag (internal)", agent, nostr.Tags{enc}, "", false},
		{"empty p", agent, nostr.Tags{{"p", ""}, enc}, "", false},
		{"a valueless p beside Alice's", agent, nostr.Tags{{"p"}, {"p", alice}, enc}, alice, true},
		{"a valueless marker still encrypts", agent, nostr.Tags{{"p", alice}, {"encrypted"}}, alice, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evt := &nostr.Event{PubKey: tc.author, Tags: tc.tags}
			got, ok := snowclaw.ReadEvent(evt).Person(agent)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("Person = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
	if _, ok := snowclaw.ReadEvent(&nostr.Event{PubKey: agent, Tags: nostr.Tags{{"p", alice}, enc}}).Person(""); ok {
		t.Fatal("with no agent key configured, an event signed by some key trusted as the agent")
	}
}

// key is a canonical hex key of the table tests, signing nothing.
func key(c rune) string { return strings.Repeat(string(c), 64) }
