package node_test

import (
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	memsvc "github.com/snowclaw/snowclaw/plugins/memory"
)

// TestAttack_Tags_TheFirstDTagIsTheAddress: an event is at the address of
// its first d tag with a value (snowclaw.ReadEvent, as every store reads
// it), for the write rule and for every reader. A #d filter matches any
// of its d tags, so a reader that took what such a filter returns as the
// event at that address would read a memory as the owner's config.
func TestAttack_Tags_TheFirstDTagIsTheAddress(t *testing.T) {
	e := startEnv(t, withSearch)
	mallory, a, b, member := newUser(), newUser(), newUser(), newUser()
	oc, mc := e.connect(&e.owner), e.connect(&mallory)
	at := nostr.Now() - 100
	cfg := e.mustPublish(oc, preferenceConfig(e.owner, at, false, npub(a), npub(b)))

	// the config's address first, whatever follows: the owner's alone
	e.refusedWith(mc, mkEvent(mallory, 30078, nostr.Tags{{"d", snowclaw.DTagConfigGlobal}, {"d", "snow:memory:x"}}, `{"respond_mode":"all"}`), "restricted:")
	// a d without a value is no d: the next one is the address
	e.refusedWith(mc, mkEvent(mallory, 30078, nostr.Tags{{"d"}, {"d", snowclaw.DTagConfigGlobal}}, `{"respond_mode":"all"}`), "restricted:")

	// the owner's memory naming the config's address second is the
	// memory it is: stored at its own address, and no config
	note := nostr.Event{Kind: 30078, CreatedAt: at + 10, Content: `{"summary":"a note","source_preference":["npub1bogus"]}`,
		Tags: nostr.Tags{{"d", "snow:memory:note"}, {"d", snowclaw.DTagConfigGlobal}}}
	if err := note.Sign(e.owner.sk); err != nil {
		t.Fatal(err)
	}
	e.mustPublish(oc, note)
	if got := mustFetch(t, oc, nostr.Filter{Kinds: []int{30078}, Authors: []string{e.owner.pk}, Tags: nostr.TagMap{"d": {"snow:memory:note"}}}); !contains(got, note.ID) {
		t.Fatalf("the note is not at its own address: %v", ids(got))
	}
	checkTrust := func(when string) {
		t.Helper()
		var tv memsvc.TrustView
		if code, msg := e.v1(&member, "GET", "/api/v1/trust", nil, &tv); code != 200 {
			t.Fatalf("%s: trust: %d %s", when, code, msg)
		}
		if tv.ConfigEvent != cfg.ID || len(tv.Preference) != 2 || tv.Preference[0].Source != npub(a) {
			t.Fatalf("%s: config_event %q, preference %+v; want the config %s with [A, B]", when, tv.ConfigEvent, tv.Preference, cfg.ID)
		}
	}
	checkTrust("live")
	e.restart()
	checkTrust("after a restart")
}

// TestAttack_Tags_GroupNamedLikeMalformed: the id refused h tags read as
// is no group: not even the owner creates it, and nobody writes in it.
func TestAttack_Tags_GroupNamedLikeMalformed(t *testing.T) {
	e := startEnv(t)
	mallory := newUser()
	e.refusedWith(e.connect(&e.owner), mkEvent(e.owner, 9007, nostr.Tags{{"h", snowclaw.MalformedGroup}}, ""), "invalid:")
	e.refusedWith(e.connect(&mallory), mkEvent(mallory, 9, nostr.Tags{{"h", snowclaw.MalformedGroup}}, "hello"), "restricted:")
}
