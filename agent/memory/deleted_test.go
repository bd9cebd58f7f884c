package memory

import (
	"testing"

	"github.com/snowclaw/snowclaw"
)

// A deleted group leaves nothing in RAM, flushed or not, and nothing to
// write or delete: its events are gone already.
func TestStore_EraseGroupLeavesNothingToWrite(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	_, alice := keypair(t)
	flushed, _ := s.Remember(Item{Text: "the launch code is 6620", Tier: snowclaw.TierGroup, Group: "g", Subject: alice})
	s.Learn(Lesson{Text: "alice corrected you", Tier: snowclaw.TierGroup, Group: "g", Subject: alice, Enabled: true})
	s.TakeDirty()
	s.Remember(Item{Text: "the rendezvous is at dawn", Tier: snowclaw.TierGroup, Group: "g", Subject: alice}) // never flushed
	s.AddDecision("g", "we launch at dawn", 0)
	kept, _ := s.Remember(Item{Text: "another room's fact", Tier: snowclaw.TierGroup, Group: "g2", Subject: alice})

	if items, lessons := s.EraseGroup("g"); items != 2 || lessons != 1 {
		t.Fatalf("erased %d items and %d lessons, want 2 and 1", items, lessons)
	}
	if _, ok := s.Group("g"); ok {
		t.Fatal("the group record survived")
	}
	if _, ok := s.Item(flushed.ID); ok || len(s.Items()) != 1 || s.Items()[0].ID != kept.ID || len(s.Lessons()) != 0 {
		t.Fatalf("left items %+v lessons %+v", s.Items(), s.Lessons())
	}
	for _, k := range s.TakeDirty() {
		if k.ID == "g" || k.Kind == KindItem && k.ID != kept.ID {
			t.Errorf("still to be written: %+v", k)
		}
	}
	if gone := s.Removed(); len(gone) != 0 {
		t.Errorf("deletions queued: %+v", gone)
	}
}

// A deleted event takes its record out of RAM, dirty or not, without
// queueing anything.
func TestStore_DropDeletedRecord(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	_, alice := keypair(t)
	it, _ := s.Remember(Item{Text: "the vault code is 5731", Tier: snowclaw.TierGroup, Group: "g", Subject: alice})
	other, _ := s.Remember(Item{Text: "the hatch is red", Tier: snowclaw.TierGroup, Group: "g", Subject: alice})
	s.TouchGroup("g", 0)
	if !s.DropDeleted(Record{Item: &Item{ID: it.ID}}) || s.DropDeleted(Record{Item: &Item{ID: it.ID}}) {
		t.Fatal("the item was not dropped exactly once")
	}
	if !s.DropDeleted(Record{Group: &Group{ID: "g"}}) {
		t.Fatal("the group record was not dropped")
	}
	keys := s.TakeDirty()
	if len(keys) != 1 || keys[0].ID != other.ID {
		t.Fatalf("dirty after the drops = %+v, want only the other item", keys)
	}
	if len(s.Removed()) != 0 {
		t.Fatal("a drop queued a deletion")
	}
}
