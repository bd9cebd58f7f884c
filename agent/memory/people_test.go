package memory

import (
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr/nip19"
)

func TestStore_TouchNpub(t *testing.T) {
	_, owner := keypair(t)
	_, other := keypair(t)
	s, clk := newTestStore(t, Options{Owner: owner})

	n := s.TouchNpub(other, 100, "techteam")
	if n.FirstSeen != 100 || n.FirstSeenGroup != "techteam" || n.LastInteraction != 100 || n.IsOwner {
		t.Fatalf("first touch = %+v", n)
	}
	if got := s.TakeDirty(); len(got) != 1 || got[0].Kind != KindNpub || got[0].ID != other {
		t.Fatalf("dirty after creation = %v", got)
	}
	n = s.TouchNpub(other, 200, "elsewhere")
	if n.FirstSeen != 100 || n.FirstSeenGroup != "techteam" || n.LastInteraction != 200 {
		t.Errorf("second touch = %+v", n)
	}
	if s.Dirty() != 0 {
		t.Errorf("LastInteraction alone marked the record dirty")
	}
	if n := s.TouchNpub(other, 150, ""); n.LastInteraction != 200 {
		t.Errorf("an older touch moved LastInteraction back to %d", n.LastInteraction)
	}
	npub, _ := nip19.EncodePublicKey(owner)
	clk.Add(time.Hour)
	if o := s.TouchNpub(npub, 0, ""); !o.IsOwner || o.FirstSeen != clk.Now().Unix() {
		t.Errorf("owner by npub = %+v", o)
	}
	if z := s.TouchNpub("not a key", 1, ""); z.Pubkey != "" {
		t.Errorf("invalid key created %+v", z)
	}
}

func TestStore_SeeName(t *testing.T) {
	_, pk := keypair(t)
	s, _ := newTestStore(t, Options{})
	s.TouchNpub(pk, 1, "") // names go into records of people the agent knows
	steps := []struct {
		name string
		want bool
	}{{"k0", true}, {"k0", false}, {"  ", false}, {"Kay", true}, {"k0", true}}
	for i, st := range steps {
		if got := s.SeeName(pk, st.name, int64(i+1)); got != st.want {
			t.Errorf("step %d SeeName(%q) = %v, want %v", i, st.name, got, st.want)
		}
	}
	n, _ := s.Npub(pk)
	if len(n.DisplayNames) != 3 || n.Name() != "k0" {
		t.Errorf("names = %+v", n.DisplayNames)
	}
	for i := range 30 {
		s.SeeName(pk, string(rune('a'+i%26))+"x"+string(rune('a'+i/26)), int64(100+i))
	}
	if n, _ := s.Npub(pk); len(n.DisplayNames) != maxNames {
		t.Errorf("name history not capped: %d", len(n.DisplayNames))
	}
}

func TestStore_AddNote(t *testing.T) {
	_, pk := keypair(t)
	s, _ := newTestStore(t, Options{})
	steps := []struct {
		note  string
		owner bool
		want  bool
	}{
		{"Prefers concise responses", false, true},
		{"prefers concise responses!", false, false},
		{"Project lead", true, true},
		{"project lead", false, false}, // the owner already said it
		{"Prefers concise responses", true, true},
		{"", false, false},
	}
	for i, st := range steps {
		if got := s.AddNote(pk, st.note, st.owner); got != st.want {
			t.Errorf("step %d AddNote(%q, %v) = %v, want %v", i, st.note, st.owner, got, st.want)
		}
	}
	n, _ := s.Npub(pk)
	if len(n.Notes) != 1 || len(n.OwnerNotes) != 2 {
		t.Errorf("notes %q owner notes %q", n.Notes, n.OwnerNotes)
	}
}

func TestStore_SetPref(t *testing.T) {
	_, pk := keypair(t)
	s, _ := newTestStore(t, Options{})
	steps := []struct {
		key, value string
		want       bool
		dirty      bool
	}{
		{"language", "en", true, true},
		{"language", "en", false, false},
		{"language", "de", true, true},
		{"language", "", true, true},
		{"language", "", false, false},
		{"", "x", false, false},
	}
	for i, st := range steps {
		s.TakeDirty()
		if got := s.SetPref(pk, st.key, st.value); got != st.want {
			t.Errorf("step %d SetPref = %v, want %v", i, got, st.want)
		}
		if (s.Dirty() > 0) != st.dirty {
			t.Errorf("step %d dirty = %d, want %v", i, s.Dirty(), st.dirty)
		}
	}
	if n, _ := s.Npub(pk); len(n.Preferences) != 0 {
		t.Errorf("preferences left: %v", n.Preferences)
	}
}

// TestStore_Frozen: only FrozenPref set to "true" in the person's own
// record freezes them; no record, another value or another key does not.
func TestStore_Frozen(t *testing.T) {
	_, pk := keypair(t)
	_, other := keypair(t)
	s, _ := newTestStore(t, Options{})
	if s.Frozen(pk) {
		t.Fatal("a person without a record is frozen")
	}
	s.SetPref(pk, "frozen", "true")
	s.SetPref(pk, FrozenPref, "yes")
	if s.Frozen(pk) {
		t.Fatal("frozen without FrozenPref=true")
	}
	s.SetPref(pk, FrozenPref, "true")
	if !s.Frozen(pk) || s.Frozen(other) {
		t.Fatalf("Frozen(pk) = %v, Frozen(other) = %v; want true, false", s.Frozen(pk), s.Frozen(other))
	}
	s.SetPref(pk, FrozenPref, "")
	if s.Frozen(pk) {
		t.Fatal("still frozen once the preference is cleared")
	}
}

func TestStore_GettersReturnCopies(t *testing.T) {
	_, pk := keypair(t)
	s, _ := newTestStore(t, Options{})
	s.AddNote(pk, "one", false)
	s.SetPref(pk, "k", "v")
	s.AddTheme("g", "nostr")
	n, _ := s.Npub(pk)
	n.Notes[0] = "mutated"
	n.Preferences["k"] = "mutated"
	g, _ := s.Group("g")
	g.Themes[0] = "mutated"
	all := s.Npubs()
	all[0].Notes[0] = "mutated"

	n2, _ := s.Npub(pk)
	g2, _ := s.Group("g")
	if n2.Notes[0] != "one" || n2.Preferences["k"] != "v" || g2.Themes[0] != "nostr" {
		t.Errorf("store changed through a copy: %+v %+v", n2, g2)
	}
}

func TestStore_Groups(t *testing.T) {
	_, pk := keypair(t)
	npub, _ := nip19.EncodePublicKey(pk)
	s, _ := newTestStore(t, Options{})
	steps := []struct {
		name string
		do   func() bool
		want bool
	}{
		{"info", func() bool { return s.SetGroupInfo("g", "Tech", "coordination") }, true},
		{"same info", func() bool { return s.SetGroupInfo("g", "Tech", "") }, false},
		{"empty info", func() bool { return s.SetGroupInfo("g", "", "") }, false},
		{"member by hex", func() bool { return s.SeeMember("g", pk, "k0") }, true},
		{"same member by npub", func() bool { return s.SeeMember("g", npub, "k0") }, false},
		{"renamed member", func() bool { return s.SeeMember("g", npub, "Kay") }, true},
		{"nameless sighting keeps name", func() bool { return s.SeeMember("g", npub, "") }, false},
		{"theme", func() bool { return s.AddTheme("g", "Nostr") }, true},
		{"same theme", func() bool { return s.AddTheme("g", "nostr!") }, false},
		{"decision", func() bool { return s.AddDecision("g", "Use NIP-78 for memory", 10) }, true},
		{"same decision", func() bool { return s.AddDecision("g", "use NIP-78 for memory.", 20) }, false},
		{"no group id", func() bool { return s.AddTheme("", "x") }, false},
	}
	for _, st := range steps {
		if got := st.do(); got != st.want {
			t.Errorf("%s = %v, want %v", st.name, got, st.want)
		}
	}
	g, ok := s.Group("g")
	if !ok || g.Name != "Tech" || g.Purpose != "coordination" || len(g.Members) != 1 ||
		g.Members[0] != (Member{npub, "Kay"}) || len(g.Themes) != 1 || len(g.Decisions) != 1 {
		t.Errorf("group = %+v", g)
	}
}

func TestStore_DropNpubAndGroup(t *testing.T) {
	_, pk := keypair(t)
	s, _ := newTestStore(t, Options{})
	s.TouchNpub(pk, 1, "")
	s.TouchGroup("g", 1)
	s.Remember(Item{Text: "about them", Subject: pk})
	tests := []struct {
		name string
		do   func() bool
		want bool
	}{
		{"drop npub", func() bool { return s.DropNpub(pk) }, true},
		{"drop npub again", func() bool { return s.DropNpub(pk) }, false},
		{"drop group", func() bool { return s.DropGroup("g") }, true},
		{"drop unknown group", func() bool { return s.DropGroup("nope") }, false},
	}
	for _, tc := range tests {
		if got := tc.do(); got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, got, tc.want)
		}
	}
	if len(s.Items()) != 1 {
		t.Errorf("dropping a person removed their items")
	}
	rm := s.Removed()
	if len(rm) != 2 || rm[0].Kind != KindNpub || rm[1].Kind != KindGroup || rm[0].D == "" || rm[1].D != "snowclaw:memory:group:g" {
		t.Errorf("Removed = %+v", rm)
	}
	for _, k := range s.TakeDirty() {
		if k.Kind != KindItem {
			t.Errorf("dropped record still dirty: %+v", k)
		}
	}
}

// TestStore_SeeNameWithoutRecord: a profile of someone without a record
// creates none; the name waits in a bounded cache, newest profile wins,
// and goes into the record once the person interacts.
func TestStore_SeeNameWithoutRecord(t *testing.T) {
	s, _ := newTestStore(t, Options{NameCache: 3})
	var pks []string
	for i := range 5 {
		_, pk := keypair(t)
		pks = append(pks, pk)
		if s.SeeName(pk, "spam"+string(rune('a'+i)), int64(10+i)) {
			t.Errorf("SeeName reported a change for someone without a record")
		}
	}
	if len(s.Npubs()) != 0 || s.Dirty() != 0 {
		t.Fatalf("profiles created records: %d, dirty %d", len(s.Npubs()), s.Dirty())
	}
	if s.CachedNames() != 3 {
		t.Fatalf("cache holds %d names, want its cap 3", s.CachedNames())
	}
	s.SeeName(pks[4], "older", 1) // an older profile does not replace the newer
	s.SeeName(pks[3], "dee", 20)
	for _, tc := range []struct {
		pk, want string
	}{
		{pks[0], ""}, // evicted: least recently seen
		{pks[4], "spame"},
		{pks[3], "dee"},
	} {
		if n := s.TouchNpub(tc.pk, 30, "g"); n.Name() != tc.want && !(tc.want == "" && len(n.DisplayNames) == 0) {
			t.Errorf("record of %s has name %q (names %+v), want %q", tc.pk[:8], n.Name(), n.DisplayNames, tc.want)
		}
	}
	if s.CachedNames() != 1 {
		t.Errorf("names taken into records are still cached: %d left", s.CachedNames())
	}
}
