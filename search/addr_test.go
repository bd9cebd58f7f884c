package search

import (
	"slices"
	"testing"
)

// The address index holds one id inline, moves to a list when a second
// version arrives and back when it goes; a doc whose address only shares
// the hash is never taken for a version.
func TestAddrIndex(t *testing.T) {
	s := newState(4, nil, nil)
	doc := func(id, pk, d string, at int64) *Doc {
		x := &Doc{ID: id, Kind: 30078, Pubkey: pk, D: d, CreatedAt: at}
		s.docs[id] = x
		return x
	}
	at := func(k addrKey) []string {
		var ids []string
		s.versionsAt(k, func(d *Doc) bool { ids = append(ids, d.ID); return true })
		slices.Sort(ids)
		return ids
	}
	v1, v2 := doc("v1", "alice", "snow:memory:x", 1), doc("v2", "alice", "snow:memory:x", 2)
	other := doc("o", "bob", "snow:memory:x", 3)
	k, _ := addrOf(v1)
	ko, _ := addrOf(other)
	steps := []struct {
		name string
		do   func()
		want []string
	}{
		{"OneVersion", func() { s.versions.add(k, v1.ID) }, []string{"v1"}},
		{"TwoVersions", func() { s.versions.add(k, v2.ID) }, []string{"v1", "v2"}},
		{"AnotherAuthorApart", func() { s.versions.add(ko, other.ID) }, []string{"v1", "v2"}},
		// a colliding address: bob's doc filed under alice's hash
		{"CollisionFiltered", func() { s.versions.add(k, other.ID) }, []string{"v1", "v2"}},
		{"OldGone", func() { s.versions.remove(k, v1.ID); s.versions.remove(k, other.ID) }, []string{"v2"}},
		{"AllGone", func() { s.versions.remove(k, v2.ID) }, nil},
	}
	for _, st := range steps {
		st.do()
		if got := at(k); !slices.Equal(got, st.want) {
			t.Fatalf("%s: versions %v, want %v", st.name, got, st.want)
		}
	}
	if got := at(ko); !slices.Equal(got, []string{"o"}) {
		t.Fatalf("bob's address: %v, want [o]", got)
	}
	if len(s.versions.more) != 0 || len(s.versions.one) != 1 {
		t.Fatalf("left %d inline and %d lists, want 1 and 0", len(s.versions.one), len(s.versions.more))
	}
	s.versions.add(k, v1.ID)
	s.versions.add(k, v2.ID)
	if !s.hidden(v1) || s.hidden(v2) || s.hidden(other) {
		t.Fatalf("hidden: v1 %v v2 %v bob's %v; want only v1, the older version", s.hidden(v1), s.hidden(v2), s.hidden(other))
	}
}

// Scope answers from the indexed doc, for a doc in the log and a volatile
// one alike, and not for an id never indexed.
func TestIndex_Scope(t *testing.T) {
	ix := openTest(t, Options{Dir: t.TempDir()})
	mustIndex(t, ix,
		Doc{ID: "g", Text: "deploy notes for the team", Scope: "group:team"},
		Doc{ID: "p", Text: "my private deploy notes", Scope: "private:alice", Volatile: true})
	for _, tc := range []struct {
		id, scope        string
		volatile, wantOK bool
	}{
		{"g", "group:team", false, true},
		{"p", "private:alice", true, true},
		{"none", "", false, false},
	} {
		scope, volatile, ok := ix.Scope(tc.id)
		if scope != tc.scope || volatile != tc.volatile || ok != tc.wantOK {
			t.Errorf("Scope(%s) = %q, %v, %v; want %q, %v, %v", tc.id, scope, volatile, ok, tc.scope, tc.volatile, tc.wantOK)
		}
	}
}
