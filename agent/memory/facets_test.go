package memory

import (
	"strings"
	"testing"

	"github.com/snowclaw/snowclaw"
)

func TestFacets_ScopedLearningAndItsUndo(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	_, pk := keypair(t)
	if s.LearnNote(pk, "", "likes tea", "") {
		t.Fatal("a note was learnt about someone without a record")
	}
	s.TouchNpub(pk, 0, "g")
	s.TakeDirty()
	for _, tc := range []struct {
		name string
		do   func() bool
		want bool
	}{
		{"private note", func() bool { return s.LearnNote(pk, "", "likes tea", "") }, true},
		{"same note again", func() bool { return s.LearnNote(pk, "", "Likes tea!", "") }, false},
		{"new version replaces the old note", func() bool { return s.LearnNote(pk, "", "likes coffee", "likes tea") }, true},
		{"group pref", func() bool { return s.LearnPref(pk, "g", "Editor", "vim") }, true},
		{"same pref", func() bool { return s.LearnPref(pk, "g", "editor", "vim") }, false},
		{"bookkeeping key refused", func() bool { return s.LearnPref(pk, "g", "snowclaw.frozen", "false") }, false},
		{"other group pref", func() bool { return s.LearnPref(pk, "h", "editor", "emacs") }, true},
	} {
		if got := tc.do(); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	n, _ := s.Npub(pk)
	if got := n.Facet("").Notes; len(got) != 1 || got[0] != "likes coffee" {
		t.Fatalf("private notes %v", got)
	}
	if n.Facet("g").Preferences["editor"] != "vim" || n.Facet("h").Preferences["editor"] != "emacs" || len(n.Notes)+len(n.Preferences) != 0 {
		t.Fatalf("facets leaked into each other or into the shared part: %+v", n)
	}
	// encoded and decoded, the facets survive (they are the record's event)
	sk, _ := keypair(t)
	c, err := NewCodec(sk)
	if err != nil {
		t.Fatal(err)
	}
	evt, err := c.Encode(Record{Npub: &n})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(evt.Content, "coffee") {
		t.Fatal("the record's event is not encrypted")
	}
	back, err := c.Decode(snowclaw.ReadEvent(&evt))
	if err != nil || back.Npub.Facet("").Notes[0] != "likes coffee" || back.Npub.Facet("g").Preferences["editor"] != "vim" {
		t.Fatalf("decoded %+v, %v", back.Npub, err)
	}

	if !s.ForgetLearntPref(pk, "editor") {
		t.Fatal("the owner's undo of a learnt preference did nothing")
	}
	if s.RemoveNotes(pk, func(x string) bool { return strings.Contains(x, "coffee") }) != 1 {
		t.Fatal("forget by query missed a learnt note")
	}
	n, _ = s.Npub(pk)
	if n.Private != nil || n.Groups != nil {
		t.Fatalf("emptied facets are kept: %+v", n)
	}
	s.LearnPref(pk, "g", "editor", "vim")
	s.EraseGroup("g")
	if n, _ = s.Npub(pk); n.Groups != nil {
		t.Fatalf("a deleted group's facet is kept: %+v", n.Groups)
	}
}
