package memory

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

func TestStore_ErasePersonLeavesNoRemovedKeys(t *testing.T) {
	s := NewStore(Options{})
	alice, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	bob, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	s.TouchNpub(alice, 1, "g")
	s.TouchNpub(bob, 1, "g")
	s.SeeMember("g", alice, "alice")
	s.SeeMember("g", bob, "bob")
	s.Remember(Item{Text: "alice's cat is Miso", Tier: snowclaw.TierPrivate, Subject: alice})
	s.Remember(Item{Text: "bob likes tea", Tier: snowclaw.TierPrivate, Subject: bob})
	s.TakeDirty()

	gone := s.Erase(func(it Item) bool { return it.Subject == alice })
	if len(gone) != 1 || !s.ErasePerson(alice) {
		t.Fatalf("erase: %d items", len(gone))
	}
	if len(s.Removed()) != 0 {
		t.Fatal("erasure queued NIP-09 deletions")
	}
	if _, ok := s.Npub(alice); ok {
		t.Fatal("alice's record survived")
	}
	g, _ := s.Group("g")
	if len(g.Members) != 1 || len(s.Items()) != 1 || s.Items()[0].Subject != bob {
		t.Fatalf("members %v items %v", g.Members, s.Items())
	}
	if keys := s.TakeDirty(); len(keys) != 1 || keys[0].Kind != KindGroup {
		t.Fatalf("dirty after erase = %v, want the group record only", keys)
	}
}

func TestStore_RemoveNotes(t *testing.T) {
	s := NewStore(Options{})
	pk, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	s.AddNote(pk, "lives at 12 Elm Street", false)
	s.AddNote(pk, "address: 12 Elm Street", true)
	s.AddNote(pk, "likes chess", false)
	if n := s.RemoveNotes(pk, func(n string) bool { return containsWord(n, "elm") }); n != 2 {
		t.Fatalf("removed %d notes, want 2", n)
	}
	rec, _ := s.Npub(pk)
	if len(rec.Notes) != 1 || len(rec.OwnerNotes) != 0 {
		t.Fatalf("notes left: %v %v", rec.Notes, rec.OwnerNotes)
	}
}

func containsWord(s, w string) bool {
	for _, f := range strings.Fields(Normalize(s)) {
		if f == w {
			return true
		}
	}
	return false
}

func TestRing_Remove(t *testing.T) {
	r := NewRing(3)
	for _, p := range []string{"a", "b", "a", "c"} {
		r.Push(HistoryMessage{Pubkey: p})
	}
	if n := r.Remove(func(m HistoryMessage) bool { return m.Pubkey == "a" }); n != 1 {
		t.Fatalf("removed %d, want 1 (the oldest a fell out already)", n)
	}
	got := r.Messages()
	if len(got) != 2 || got[0].Pubkey != "b" || got[1].Pubkey != "c" {
		t.Fatalf("left %v", got)
	}
	r.Push(HistoryMessage{Pubkey: "d"})
	r.Push(HistoryMessage{Pubkey: "e"})
	if got := r.Messages(); len(got) != 3 || got[2].Pubkey != "e" {
		t.Fatalf("after pushes %v", got)
	}
}
