package node_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	memsvc "github.com/snowclaw/snowclaw/plugins/memory"
)

func npub(u user) string {
	n, _ := nip19.EncodePublicKey(u.pk)
	return n
}

// preferenceConfig is the owner's global config carrying a preference
// list, in the content or (asTag) as a tag; at orders versions.
func preferenceConfig(owner user, at nostr.Timestamp, asTag bool, list ...string) nostr.Event {
	tags := nostr.Tags{{"d", "snowclaw:config:global"}}
	content := ""
	if asTag {
		tags = append(tags, append(nostr.Tag{"source_preference"}, list...))
	} else {
		body, _ := json.Marshal(map[string]any{"respond_mode": "mention", "source_preference": list})
		content = string(body)
	}
	evt := nostr.Event{Kind: 30078, CreatedAt: at, Tags: tags, Content: content}
	evt.Sign(owner.sk)
	return evt
}

// topHit is the id of the first search result for q, as anyone sees it.
func topHit(t *testing.T, e *testEnv, q string) string {
	t.Helper()
	got := search(t, e, nil, nostr.Filter{Search: q})
	if len(got) < 2 {
		t.Fatalf("search %q: %v, want both memories", q, ids(got))
	}
	return got[0].ID
}

// TestTrust_PreferenceOrdersSearch: the owner's list decides between two
// sources' equal memories, live, after a restart, and only the owner's.
func TestTrust_PreferenceOrdersSearch(t *testing.T) {
	e := startEnv(t, withSearch)
	a, b, member := newUser(), newUser(), newUser()
	c := e.connect(nil)
	at := nostr.Now() - 100
	mk := func(u user, text string) nostr.Event {
		evt := nostr.Event{Kind: 30078, CreatedAt: at, Tags: nostr.Tags{{"d", "snow:memory:ops/standup"}}, Content: text}
		evt.Sign(u.sk)
		return e.mustPublish(c, evt)
	}
	fromA := mk(a, "the standup meeting starts at nine")
	fromB := mk(b, "the standup meeting starts at ten")
	oc := e.connect(&e.owner)
	const q = "standup meeting starts"

	e.mustPublish(oc, preferenceConfig(e.owner, at, false, npub(a), npub(b)))
	if got := topHit(t, e, q); got != fromA.ID {
		t.Fatalf("list [A,B]: top %s, want A's %s", got[:8], fromA.ID[:8])
	}
	e.mustPublish(oc, preferenceConfig(e.owner, at+1, true, b.pk, npub(a)))
	if got := topHit(t, e, q); got != fromB.ID {
		t.Fatalf("list [B,A] (tag form): top %s, want B's %s", got[:8], fromB.ID[:8])
	}
	// a member cannot reorder, and a bad list from the owner is refused:
	// both leave [B,A] in force
	e.refusedWith(e.connect(&member), preferenceConfig(member, at+5, false, npub(a)), "restricted:")
	e.refusedWith(oc, preferenceConfig(e.owner, at+6, false, "npub1bogus"), "invalid:")
	if got := topHit(t, e, q); got != fromB.ID {
		t.Fatalf("after refused configs: top %s, want B's still", got[:8])
	}
	e.restart()
	oc = e.connect(&e.owner)
	if got := topHit(t, e, q); got != fromB.ID {
		t.Fatalf("after restart: top %s, want B's (the stored list)", got[:8])
	}
	// and not by chance: the explain breakdown carries the list's weights
	res := e.searchAPI(&member, q, "&explain=1")
	for id, want := range map[string]float64{fromB.ID: 1.5, fromA.ID: 1.25} {
		h, ok := hitFor(res, id)
		if !ok || h.Explain == nil || math.Abs(h.Explain.Trust-want) > 1e-9 {
			t.Fatalf("after restart, trust of %s: %s, want %v", id[:8], mustJSON(h.Explain), want)
		}
	}
	var tv memsvc.TrustView
	if code, msg := e.v1(&member, "GET", "/api/v1/trust", nil, &tv); code != 200 {
		t.Fatalf("trust: %d %s", code, msg)
	}
	if len(tv.Preference) != 2 || tv.Preference[0].Source != npub(b) || tv.Preference[1].Source != npub(a) {
		t.Fatalf("trust preference %+v, want [B, A] as npubs", tv.Preference)
	}
	if math.Abs(tv.Preference[0].Weight-1.5) > 1e-9 || math.Abs(tv.Preference[1].Weight-1.25) > 1e-9 || tv.DefaultTrust != 1 {
		t.Fatalf("weights %v %v default %v, want 1.5 1.25 1", tv.Preference[0].Weight, tv.Preference[1].Weight, tv.DefaultTrust)
	}
	stored := mustFetch(t, oc, nostr.Filter{Kinds: []int{30078}, Authors: []string{e.owner.pk}, Tags: nostr.TagMap{"d": {"snowclaw:config:global"}}})
	if len(stored) != 1 || tv.ConfigEvent != stored[0].ID {
		t.Fatalf("config_event %q, want the stored event %v", tv.ConfigEvent, ids(stored))
	}
	// deleting the config drops the list: equal trust again
	e.mustPublish(oc, mkEvent(e.owner, 5, nostr.Tags{{"e", stored[0].ID}}, ""))
	if code, _ := e.v1(&member, "GET", "/api/v1/trust", nil, &tv); code != 200 || len(tv.Preference) != 0 || tv.ConfigEvent != "" {
		t.Fatalf("after deletion: %d %+v, want no list", code, tv)
	}
}

// TestTrust_FileWeightsStayAndGroupsHidden: sources configured in the file
// keep their weights beside the list; a private group in the list is shown
// to its members and the owner only.
func TestTrust_FileWeightsStayAndGroupsHidden(t *testing.T) {
	fileSrc := newUser()
	w := buildWorldWith(t, withSearch, func(o *node.Options) {
		o.Search.Search.Sources = map[string]float64{fileSrc.pk: 0.4}
		o.Search.Search.DefaultTrust = 0.8
	})
	oc := w.connect(&w.owner)
	w.mustPublish(oc, preferenceConfig(w.owner, nostr.Now()+1, false, "group:"+privGroup, npub(w.member)))
	for _, tc := range []struct {
		name   string
		reader *user
		want   []string
	}{
		{"owner", &w.owner, []string{"group:" + privGroup, npub(w.member)}},
		{"member", &w.member, []string{"group:" + privGroup, npub(w.member)}},
		{"non-member", &w.nonMember, []string{npub(w.member)}},
	} {
		var tv memsvc.TrustView
		if code, msg := w.v1(tc.reader, "GET", "/api/v1/trust", nil, &tv); code != 200 {
			t.Fatalf("%s: %d %s", tc.name, code, msg)
		}
		var got []string
		for _, p := range tv.Preference {
			got = append(got, p.Source)
		}
		if len(got) != len(tc.want) || got[0] != tc.want[0] {
			t.Errorf("%s sees %v, want %v", tc.name, got, tc.want)
		}
		if last := tv.Preference[len(tv.Preference)-1]; math.Abs(last.Weight-0.8*1.25) > 1e-9 {
			t.Errorf("%s: last weight %v, want 0.8 × 1.25", tc.name, last.Weight)
		}
		if len(tv.Configured) != 1 || tv.Configured[0].Source != npub(fileSrc) || tv.Configured[0].Weight != 0.4 {
			t.Errorf("%s: configured %+v, want the file source at 0.4", tc.name, tv.Configured)
		}
	}
	if code, _ := w.v1(nil, "GET", "/api/v1/trust", nil, nil); code != 401 {
		t.Fatalf("trust without auth: %d, want 401", code)
	}
}
