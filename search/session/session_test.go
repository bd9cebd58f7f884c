package session

import (
	"fmt"
	"slices"
	"testing"
)

func mates(s *Set, key, id string, readable func(string) bool) []string {
	var out []string
	s.Mates(key, id, readable, func(m string) { out = append(out, m) })
	slices.Sort(out)
	return out
}

func all(string) bool { return true }

func TestSet_AddRemoveMates(t *testing.T) {
	s := NewSet()
	k, other := Of("d1", "alice", 100, "Ann: hi"), Of("d2", "alice", 101, "Ann: hi")
	for _, id := range []string{"a", "b", "c", "b"} { // b twice: still one member
		s.Add(k, id)
	}
	s.Add(other, "d")
	s.Add("", "e") // no session
	if got := mates(s, k, "a", all); !slices.Equal(got, []string{"b", "c"}) {
		t.Fatalf("mates of a: %v", got)
	}
	if got := mates(s, k, "a", func(id string) bool { return id != "c" }); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("mates of a, c unreadable: %v", got)
	}
	if got := mates(s, "", "e", all); got != nil {
		t.Fatalf("no session, mates %v", got)
	}
	if got := mates(s, other, "d", all); got != nil {
		t.Fatalf("alone, mates %v", got)
	}
	if s.Key("a") != k || s.Key("d") != other || s.Key("e") != "" {
		t.Fatalf("keys: a %q, d %q, e %q", s.Key("a"), s.Key("d"), s.Key("e"))
	}
	s.Remove(k, "b")
	s.Remove(k, "zz") // unknown: nothing happens
	if got := mates(s, k, "a", all); !slices.Equal(got, []string{"c"}) || s.Size(k) != 2 {
		t.Fatalf("after remove: %v, size %d", got, s.Size(k))
	}
	s.Remove(k, "a")
	s.Remove(k, "c")
	if s.Key("a") != "" {
		t.Fatalf("removed a still in %q", s.Key("a"))
	}
	if s.Size(k) != 0 || len(s.byKey) != 1 {
		t.Fatalf("emptied session kept: %v", s.byKey)
	}
}

// TestSet_HugeSessionLendsNothing: an author who stores more than MaxLend
// memories under one timestamp gets no session lending, so no search
// walks all of them.
func TestSet_HugeSessionLendsNothing(t *testing.T) {
	s := NewSet()
	k := Of("d", "mallory", 1, "Mallory: buy")
	for i := range MaxLend {
		s.Add(k, fmt.Sprint(i))
	}
	if got := mates(s, k, "0", all); len(got) != MaxLend-1 {
		t.Fatalf("%d members: %d mates, want %d", MaxLend, len(got), MaxLend-1)
	}
	s.Add(k, "one more")
	if got := mates(s, k, "0", all); got != nil {
		t.Fatalf("%d members: %d mates, want none", MaxLend+1, len(got))
	}
}

func TestOf_AuthorTimeAndTurns(t *testing.T) {
	const turn = "Ann: we met at the lake"
	k := Of("d", "a", 1, turn)
	if k == Of("d", "a", 2, turn) || k == Of("d", "b", 1, turn) || k != Of("e", "a", 1, "Bo: hi") {
		t.Fatal("keys do not tell author and time apart")
	}
	for _, text := range []string{"the lake is cold", "note: buy milk", ""} {
		if k := Of("d", "a", 1, text); k != "" {
			t.Errorf("%q is no turn, session %q", text, k)
		}
	}
	if k := Of("", "a", 1, turn); k != "" {
		t.Errorf("a message (no d tag) has session %q", k)
	}
}

func TestSet_LendAndAny(t *testing.T) {
	s := NewSet()
	k := Of("d", "a", 1, "Ann: hi")
	for _, id := range []string{"a", "b", "c"} {
		s.Add(k, id)
	}
	out := map[string]float64{}
	s.Lend(k, "a", 0.5, func(id string) bool { return id != "c" }, out)
	s.Lend(k, "b", 0, all, out) // lends nothing, adds no entry
	if len(out) != 1 || out["b"] != 0.5 {
		t.Fatalf("lent %v, want b 0.5 only", out)
	}
	if !s.Any(k, "a", all, func(id string) bool { return id == "c" }) {
		t.Fatal("Any misses c")
	}
	if s.Any(k, "a", func(id string) bool { return id != "c" }, func(id string) bool { return id == "c" }) {
		t.Fatal("Any sees an unreadable mate")
	}
}
