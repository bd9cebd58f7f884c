package memory

import (
	"fmt"
	"testing"

	"github.com/nbd-wtf/go-nostr/nip19"
	"github.com/snowclaw/snowclaw"
)

func TestStore_DirtyBookkeeping(t *testing.T) {
	_, pk := keypair(t)
	s, _ := newTestStore(t, Options{})
	s.AddNote(pk, "n", false)
	s.AddNote(pk, "m", false) // same record: one key
	s.TouchGroup("g", 0)
	it, _ := s.Remember(Item{Text: "fact", Tier: snowclaw.TierPublic})
	l, _ := s.Learn(Lesson{Text: "lesson", Source: "owner"})

	if s.Dirty() != 4 {
		t.Fatalf("Dirty = %d, want 4", s.Dirty())
	}
	keys := s.TakeDirty()
	if s.Dirty() != 0 || len(keys) != 4 {
		t.Fatalf("TakeDirty = %+v, left %d", keys, s.Dirty())
	}
	npub, _ := nip19.EncodePublicKey(pk)
	want := []Key{
		{KindNpub, pk, "snowclaw:memory:npub:" + npub},
		{KindGroup, "g", "snowclaw:memory:group:g"},
		{KindItem, it.ID, "snow:memory:" + it.Topic},
		{KindLesson, l.ID, "snow:memory:lesson/" + l.ID},
	}
	for i, k := range keys {
		if k != want[i] {
			t.Errorf("key %d = %+v, want %+v", i, k, want[i])
		}
		if _, ok := s.Record(k); !ok {
			t.Errorf("Record(%+v) missing", k)
		}
	}
	s.MarkDirty(Key{Kind: KindItem, ID: it.ID}) // d tag filled in by the store
	s.MarkDirty(Key{Kind: KindItem, ID: "gone"})
	if got := s.TakeDirty(); len(got) != 1 || got[0] != want[2] {
		t.Errorf("after MarkDirty: %+v", got)
	}
}

func TestAddressOf_Cases(t *testing.T) {
	_, agent := keypair(t)
	_, pk := keypair(t)
	npub, _ := nip19.EncodePublicKey(pk)
	tests := []struct {
		name string
		k    Key
		want string
	}{
		{"npub rebuilt from id", Key{Kind: KindNpub, ID: pk}, "30078:" + agent + ":snowclaw:memory:npub:" + npub},
		{"group", Key{Kind: KindGroup, ID: "g"}, "30078:" + agent + ":snowclaw:memory:group:g"},
		{"lesson", Key{Kind: KindLesson, ID: "abc"}, "30078:" + agent + ":snow:memory:lesson/abc"},
		{"item with d", Key{Kind: KindItem, ID: "abc", D: "snow:memory:fact/general/abc"}, "30078:" + agent + ":snow:memory:fact/general/abc"},
		{"item without d", Key{Kind: KindItem, ID: "abc"}, ""},
	}
	for _, tc := range tests {
		if got := AddressOf(tc.k, agent); got != tc.want {
			t.Errorf("%s: AddressOf = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestStore_LoadNewerWins(t *testing.T) {
	_, owner := keypair(t)
	_, pk := keypair(t)
	npub, _ := nip19.EncodePublicKey(owner)
	s, _ := newTestStore(t, Options{Owner: npub})
	item := func(text string, updated int64) *Item {
		return &Item{ID: "aaaaaaaaaaaa", Topic: "fact/general/aaaaaaaaaaaa", Text: text, Tier: snowclaw.TierPublic, UpdatedAt: updated}
	}
	steps := []struct {
		name string
		rec  Record
	}{
		{"npub v2", Record{Npub: &Npub{Pubkey: pk, Notes: []string{"v2"}}, CreatedAt: 20}},
		{"npub v1 older", Record{Npub: &Npub{Pubkey: pk, Notes: []string{"v1"}}, CreatedAt: 10}},
		{"owner by npub", Record{Npub: &Npub{Pubkey: owner}, CreatedAt: 1}},
		{"item new", Record{Item: item("new", 20), CreatedAt: 5}},
		{"item old", Record{Item: item("old", 10), CreatedAt: 50}},
		{"group", Record{Group: &Group{ID: "g", Purpose: "p"}, CreatedAt: 3}},
		{"lesson", Record{Lesson: &Lesson{ID: "l1", Text: "be brief", Enabled: false, UpdatedAt: 4}, CreatedAt: 4}},
		{"two kinds ignored", Record{Group: &Group{ID: "x"}, Lesson: &Lesson{ID: "y"}}},
		{"invalid item ignored", Record{Item: &Item{ID: "b", Topic: "t/b", Text: "x", Tier: snowclaw.TierGroup}}},
	}
	for _, st := range steps {
		s.Load(st.rec)
	}
	if s.Dirty() != 0 {
		t.Errorf("Load marked %d records dirty", s.Dirty())
	}
	n, _ := s.Npub(pk)
	o, _ := s.Npub(owner)
	it, _ := s.Item("aaaaaaaaaaaa")
	l, _ := s.Lesson("l1")
	_, bad := s.Item("b")
	checks := []struct {
		name string
		ok   bool
	}{
		{"newer npub kept", len(n.Notes) == 1 && n.Notes[0] == "v2"},
		{"owner flagged from options", o.IsOwner},
		{"newer item kept", it.Text == "new"},
		{"group loaded", len(s.Groups()) == 1},
		{"disabled lesson stays disabled", !l.Enabled && l.Text == "be brief"},
		{"invalid item skipped", !bad},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s", c.name)
		}
	}

	// Unflushed changes in RAM are newer than anything stored.
	s.AddNote(pk, "fresh", false)
	s.Load(Record{Npub: &Npub{Pubkey: pk, Notes: []string{"v3"}}, CreatedAt: 30})
	if n, _ := s.Npub(pk); len(n.Notes) != 2 || n.Notes[1] != "fresh" {
		t.Errorf("Load overwrote a dirty record: %q", n.Notes)
	}
}

// TestCodec_StoreRoundTrip is the flush-then-restart path: dirty records
// encoded, decoded and loaded into a fresh store come back the same.
func TestCodec_StoreRoundTrip(t *testing.T) {
	p := newParties(t)
	s, _ := newTestStore(t, Options{})
	s.SeeName(p.person, "k0", 1)
	s.AddNote(p.person, "project lead", true)
	s.SetPref(p.person, "language", "en")
	s.SeeMember("g", p.person, "k0")
	s.AddDecision("g", "ship it", 2)
	s.Remember(Item{Text: "likes tea", Subject: p.person, Source: SourceExplicit})
	s.Remember(Item{Text: "deploys friday", Group: "g"})
	s.Remember(Item{Text: "relay uses badger", Tier: snowclaw.TierPublic, Source: SourceOwner})
	s.Learn(Lesson{Text: "be brief", Source: "owner"})

	fresh, _ := newTestStore(t, Options{})
	for _, k := range s.TakeDirty() {
		rec, ok := s.Record(k)
		if !ok {
			t.Fatalf("Record(%+v) missing", k)
		}
		evt := p.signed(t, rec)
		if evt.Tags.GetD() != k.D {
			t.Errorf("event d %q, key d %q", evt.Tags.GetD(), k.D)
		}
		back, err := p.codec.Decode(snowclaw.ReadEvent(evt))
		if err != nil {
			t.Fatalf("Decode %s: %v", k.D, err)
		}
		fresh.Load(back)
	}
	// %+v prints nil and empty lists alike; JSON writes both as [].
	for _, pair := range [][2]any{{s.Npubs(), fresh.Npubs()}, {s.Groups(), fresh.Groups()}, {s.Items(), fresh.Items()}, {s.Lessons(), fresh.Lessons()}} {
		if a, b := fmt.Sprintf("%+v", pair[0]), fmt.Sprintf("%+v", pair[1]); a != b {
			t.Errorf("restart changed a record:\n was %s\n now %s", a, b)
		}
	}
	if len(fresh.Npubs()) != 1 || len(fresh.Groups()) != 1 || len(fresh.Items()) != 3 || len(fresh.Lessons()) != 1 {
		t.Errorf("restart lost records")
	}
}

// TestTouchGroup_NoCopy: recording a message's activity in a group with a
// full record allocates nothing; it used to return a copy of the record
// (decisions, members, themes) that its one caller, every group message,
// threw away.
func TestTouchGroup_NoCopy(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	for i := range 100 {
		s.AddDecision("g", fmt.Sprintf("decision number %d about the release", i), int64(1000+i))
		s.SeeMember("g", fmt.Sprintf("npub1member%d", i), fmt.Sprintf("member %d", i))
	}
	at := int64(1_800_000_000) // after the test clock
	if n := testing.AllocsPerRun(100, func() { at++; s.TouchGroup("g", at) }); n != 0 {
		t.Fatalf("%v allocations per TouchGroup, want 0", n)
	}
	if g, _ := s.Group("g"); g.LastActivity != at {
		t.Fatalf("last activity %d, want %d", g.LastActivity, at)
	}
}
