package memory

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr/nip19"
	"github.com/snowclaw/snowclaw"
)

func TestStore_RememberDefaults(t *testing.T) {
	_, pk := keypair(t)
	npub, _ := nip19.EncodePublicKey(pk)
	s, clk := newTestStore(t, Options{})
	now := clk.Now().Unix()
	tests := []struct {
		name       string
		in         Item
		tier       snowclaw.Tier
		topicStart string
		conf       float64
		stored     bool
	}{
		{"person in private", Item{Text: "likes tea", Subject: npub, Source: SourceExplicit}, snowclaw.TierPrivate, "user/" + npub + "/notes/", 0.9, true},
		{"in a group", Item{Text: "deploys on friday", Group: "g1", Subject: pk}, snowclaw.TierGroup, "group/g1/facts/", 0.7, true},
		{"owner fact", Item{Text: "the relay runs badger", Tier: snowclaw.TierPublic, Source: SourceOwner}, snowclaw.TierPublic, "fact/general/", 0.95, true},
		{"no scope is internal", Item{Text: "a note to self"}, snowclaw.TierInternal, "agent/notes/", 0.7, true},
		{"given topic gets the id", Item{Text: "x", Tier: snowclaw.TierPublic, Topic: "project/snowclaw/", Confidence: 0.5}, snowclaw.TierPublic, "project/snowclaw/", 0.5, true},
		{"group tier without group", Item{Text: "x", Tier: snowclaw.TierGroup}, "", "", 0, false},
		{"private without subject", Item{Text: "x", Tier: snowclaw.TierPrivate}, "", "", 0, false},
		{"bad subject", Item{Text: "x", Subject: "bob"}, "", "", 0, false},
		{"empty text", Item{Text: " "}, "", "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, isNew := s.Remember(tc.in)
			if !tc.stored {
				if got.ID != "" || isNew {
					t.Fatalf("stored an invalid item: %+v", got)
				}
				return
			}
			if !isNew || got.Tier != tc.tier || got.Confidence != tc.conf || got.CreatedAt != now || got.UpdatedAt != now {
				t.Errorf("got %+v", got)
			}
			if !strings.HasPrefix(got.Topic, tc.topicStart) || !strings.HasSuffix(got.Topic, "/"+got.ID) {
				t.Errorf("topic %q, want %s…/%s", got.Topic, tc.topicStart, got.ID)
			}
			if got.ID != ItemID(got.Tier, got.Scope(), got.Text) {
				t.Errorf("id %s is not ItemID", got.ID)
			}
			if got.Tier == snowclaw.TierPrivate && got.Subject != pk {
				t.Errorf("subject %q not normalized to hex", got.Subject)
			}
			if got.Tier != snowclaw.TierGroup && got.Group != "" {
				t.Errorf("non-group item kept group %q", got.Group)
			}
		})
	}
}

func TestStore_RememberMerge(t *testing.T) {
	s, clk := newTestStore(t, Options{})
	first, isNew := s.Remember(Item{Text: "Likes tea", Group: "g", Detail: "short", Source: SourceAgent})
	if !isNew {
		t.Fatal("first remember not new")
	}
	s.TakeDirty()
	clk.Add(time.Minute)
	second, isNew := s.Remember(Item{Text: "likes TEA!", Group: "g", Detail: "a much longer detail", Source: SourceExplicit})
	if isNew || second.ID != first.ID {
		t.Fatalf("same fact not merged: new=%v %s vs %s", isNew, second.ID, first.ID)
	}
	tests := []struct {
		name string
		ok   bool
	}{
		{"hits incremented", second.Hits == 1},
		{"updated moved on", second.UpdatedAt == first.UpdatedAt+60},
		{"created kept", second.CreatedAt == first.CreatedAt},
		{"longer detail kept", second.Detail == "a much longer detail"},
		{"source upgraded", second.Source == SourceExplicit},
		{"confidence upgraded", second.Confidence == 0.9},
		{"one item", len(s.Items()) == 1},
		{"dirty again", s.Dirty() == 1},
	}
	for _, tc := range tests {
		if !tc.ok {
			t.Errorf("%s: %+v", tc.name, second)
		}
	}
	third, _ := s.Remember(Item{Text: "likes tea", Group: "g", Detail: "tiny", Source: SourceAgent})
	if third.Detail != "a much longer detail" || third.Source != SourceExplicit || third.Hits != 2 {
		t.Errorf("merge downgraded: %+v", third)
	}
	if _, isNew := s.Remember(Item{Text: "likes tea", Group: "other"}); !isNew {
		t.Errorf("same words in another group merged")
	}
}

func TestStore_CompactionCap(t *testing.T) {
	tests := []struct {
		name        string
		max, writes int
		wantItems   int
		wantRemoved int
	}{
		{"below buffer no compaction", 10, 11, 11, 0},
		{"past buffer compacts to max", 10, 12, 10, 2},
		{"again past buffer", 10, 24, 10, 14},
		{"small max buffer of one", 3, 5, 3, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, clk := newTestStore(t, Options{MaxItems: tc.max})
			for i := range tc.writes {
				clk.Add(time.Second)
				s.Remember(Item{Text: fmt.Sprintf("fact number %d", i), Tier: snowclaw.TierPublic})
			}
			items := s.Items()
			if len(items) != tc.wantItems {
				t.Fatalf("items = %d, want %d", len(items), tc.wantItems)
			}
			if items[0].Text != fmt.Sprintf("fact number %d", tc.writes-1) {
				t.Errorf("newest item dropped; first is %q", items[0].Text)
			}
			removed := s.Removed()
			if len(removed) != tc.wantRemoved {
				t.Fatalf("removed = %d, want %d", len(removed), tc.wantRemoved)
			}
			for _, k := range removed {
				if _, ok := s.Item(k.ID); ok || k.Kind != KindItem || !strings.HasPrefix(k.D, "snow:memory:fact/general/") {
					t.Errorf("removed key %+v still present or malformed", k)
				}
			}
			for _, k := range s.TakeDirty() {
				if _, ok := s.Item(k.ID); !ok {
					t.Errorf("dirty key %+v of a removed item", k)
				}
			}
		})
	}
}

func TestStore_CompactDedupe(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	// Loaded from events written under other ids: same text, same scope.
	for i, d := range []struct {
		id, group string
		at        int64
	}{{"aaaaaaaaaaaa", "g", 10}, {"bbbbbbbbbbbb", "g", 20}, {"cccccccccccc", "h", 5}} {
		s.Load(Record{Item: &Item{ID: d.id, Topic: "t/" + d.id, Text: "Likes tea", Tier: snowclaw.TierGroup, Group: d.group, CreatedAt: d.at, UpdatedAt: d.at}, CreatedAt: int64(i)})
	}
	removed := s.Compact(0)
	if len(removed) != 1 || removed[0].ID != "aaaaaaaaaaaa" {
		t.Fatalf("Compact removed %+v, want the older duplicate in g only", removed)
	}
	if rm := s.Removed(); len(rm) != 1 || rm[0].D != "snow:memory:t/aaaaaaaaaaaa" {
		t.Errorf("Removed = %+v", rm)
	}
}

func TestStore_ForgetText(t *testing.T) {
	_, pk := keypair(t)
	_, other := keypair(t)
	npub, _ := nip19.EncodePublicKey(pk)
	s, _ := newTestStore(t, Options{})
	s.Remember(Item{Text: "Likes green tea", Subject: pk})
	s.Remember(Item{Text: "Builds steam engines", Subject: pk})
	s.Remember(Item{Text: "Likes green tea", Subject: other})
	s.Remember(Item{Text: "Likes green tea", Group: "g"})
	tests := []struct {
		name  string
		tier  snowclaw.Tier
		scope string
		text  string
		want  int
	}{
		{"whole words only", snowclaw.TierPrivate, pk, "tea", 1},
		{"already gone", snowclaw.TierPrivate, npub, "likes green tea", 0},
		{"not a substring of a word", snowclaw.TierPrivate, pk, "team", 0},
		{"empty matches nothing", snowclaw.TierPrivate, pk, "!!", 0},
		{"group scope", snowclaw.TierGroup, "g", "GREEN TEA.", 1},
	}
	for _, tc := range tests {
		if got := s.ForgetText(tc.tier, tc.scope, tc.text); len(got) != tc.want {
			t.Errorf("%s: forgot %d, want %d", tc.name, len(got), tc.want)
		}
	}
	if left := s.Items(); len(left) != 2 {
		t.Errorf("left %+v", left)
	}
	if rm := s.Removed(); len(rm) != 2 {
		t.Errorf("Removed = %+v", rm)
	}
}

func TestStore_RememberAfterForgetCancelsDeletion(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	it, _ := s.Remember(Item{Text: "x y z", Tier: snowclaw.TierPublic})
	s.Forget(func(i Item) bool { return i.ID == it.ID })
	if s.Dirty() != 0 {
		t.Errorf("forgotten item still dirty")
	}
	s.Remember(Item{Text: "x y z", Tier: snowclaw.TierPublic})
	if rm := s.Removed(); len(rm) != 0 {
		t.Errorf("deletion still queued for a re-remembered item: %+v", rm)
	}
}
