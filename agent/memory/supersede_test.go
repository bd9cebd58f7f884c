package memory

import (
	"errors"
	"strings"
	"testing"

	"github.com/snowclaw/snowclaw"
)

func TestStore_ReplaceCorrectsAndPromotes(t *testing.T) {
	_, alice := keypair(t)
	s := NewStore(Options{})
	old, _ := s.Remember(Item{Text: "address is 12 Oak Street", Subject: alice, Source: SourceExplicit, Topic: "user/home"})
	s.TakeDirty()

	fixed, err := s.Replace(old.ID, Item{Text: "address is 7 Elm Road", Supersedes: "ev-old"})
	if err != nil {
		t.Fatal(err)
	}
	if fixed.Version != 2 || fixed.Tier != snowclaw.TierPrivate || fixed.Subject != alice || fixed.Source != SourceExplicit {
		t.Fatalf("corrected item lost its provenance: %+v", fixed)
	}
	if fixed.Topic != "user/home/"+fixed.ID || fixed.ID == old.ID {
		t.Fatalf("topic %q id %q (old %q)", fixed.Topic, fixed.ID, old.ID)
	}
	if _, ok := s.Item(old.ID); ok {
		t.Fatal("old version still in RAM")
	}
	if len(s.Removed()) != 0 {
		t.Fatal("the old version was queued for deletion; it must stay as history")
	}
	if d := s.TakeDirty(); len(d) != 1 || d[0].Kind != KindItem {
		t.Fatalf("dirty = %v, want the new item", d)
	}

	shared, err := s.Replace(fixed.ID, Item{Text: fixed.Text, Tier: snowclaw.TierGroup, Group: "crew"})
	if err != nil {
		t.Fatal(err)
	}
	if shared.Version != 3 || shared.Group != "crew" || strings.Contains(shared.Topic, "user/") {
		t.Fatalf("promoted item %+v: the private topic must not follow it into the group", shared)
	}

	for _, tc := range []struct {
		name, id string
		next     Item
		want     string
	}{
		{"unknown", "nope", Item{Text: "x"}, "no such item"},
		{"unchanged", shared.ID, Item{Text: "Address is 7 Elm Road!"}, "same as the old"},
	} {
		_, err := s.Replace(tc.id, tc.next)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := s.Replace("nope", Item{Text: "x"}); !errors.Is(err, ErrNoItem) {
		t.Fatalf("unknown: %v is not ErrNoItem", err)
	}
	// within a tier the group carries over when the caller names none
	again, err := s.Replace(shared.ID, Item{Text: "address is 8 Elm Road", Tier: snowclaw.TierGroup})
	if err != nil || again.Group != "crew" {
		t.Fatalf("group carry-over: %+v %v", again, err)
	}
}

func TestCodec_VersionTagsRoundTrip(t *testing.T) {
	sk, _ := keypair(t)
	c, err := NewCodec(sk)
	if err != nil {
		t.Fatal(err)
	}
	it := Item{ID: "aaaaaaaaaaaa", Topic: "fact/general/aaaaaaaaaaaa", Text: "water boils at 100C", Tier: snowclaw.TierPublic, Version: 3, Supersedes: strings.Repeat("b", 64)}
	evt, err := c.Encode(Record{Item: &it})
	if err != nil {
		t.Fatal(err)
	}
	if v := snowclaw.TagValues(&evt, "snow:version"); len(v) != 1 || v[0] != "3" {
		t.Fatalf("snow:version %v", v)
	}
	rec, err := c.Decode(snowclaw.ReadEvent(&evt))
	if err != nil || rec.Item.Version != 3 || rec.Item.Supersedes != it.Supersedes {
		t.Fatalf("decoded %+v, %v", rec.Item, err)
	}
}
