package session

import (
	"fmt"
	"slices"
	"testing"
)

func mates(s *Set, id string, readable func(string) bool) []string {
	var out []string
	s.Mates(id, readable, func(m string) { out = append(out, m) })
	slices.Sort(out)
	return out
}

func all(string) bool { return true }

func TestSet_AddRemoveMates(t *testing.T) {
	s := NewSet(60)
	k, other := Of("d1", "alice", "Ann: hi"), Of("d2", "bob", "Ann: hi")
	for _, id := range []string{"a", "b", "c", "b"} { // b twice: still one member
		s.Add(k, id, 100)
	}
	s.Add(other, "d", 100)
	s.Add("", "e", 100) // no session
	if got := mates(s, "a", all); !slices.Equal(got, []string{"b", "c"}) {
		t.Fatalf("mates of a: %v", got)
	}
	if got := mates(s, "a", func(id string) bool { return id != "c" }); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("mates of a, c unreadable: %v", got)
	}
	if got := mates(s, "e", all); got != nil {
		t.Fatalf("no session, mates %v", got)
	}
	if got := mates(s, "d", all); got != nil {
		t.Fatalf("another author's memory of that second has mates %v", got)
	}
	if s.Key("a") != k || s.Key("d") != other || s.Key("e") != "" {
		t.Fatalf("keys: a %q, d %q, e %q", s.Key("a"), s.Key("d"), s.Key("e"))
	}
	s.Remove("b")
	s.Remove("zz") // unknown: nothing happens
	if got := mates(s, "a", all); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("after remove: %v", got)
	}
	s.Remove("a")
	s.Remove("c")
	if s.Key("a") != "" {
		t.Fatalf("removed a still in %q", s.Key("a"))
	}
	if len(s.byKey) != 1 {
		t.Fatalf("emptied session kept: %v", s.byKey)
	}
}

// TestSet_TimeWindow: a session is a run of one author's memories with no
// gap longer than the window, whatever order they arrive in: a memory
// that fills a gap joins the two runs, and removing it splits them again.
func TestSet_TimeWindow(t *testing.T) {
	const w = 60
	s := NewSet(w)
	k := Of("d", "alice", "Ann: hi")
	// bucket edges on purpose: 59 and 60 are one bucket apart, 1 s apart
	for id, at := range map[string]int64{"a": 0, "b": 59, "c": 60, "d": 120, "far": 120 + w + 1, "farther": 120 + 3*w} {
		s.Add(k, id, at)
	}
	if got := mates(s, "a", all); !slices.Equal(got, []string{"b", "c", "d"}) {
		t.Fatalf("a's run: %v, want b c d (chained, each within %d s of the last)", got, w)
	}
	if got := mates(s, "d", all); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("d's run: %v", got)
	}
	if got := mates(s, "far", all); got != nil {
		t.Fatalf("61 s after d: mates %v, want none", got)
	}
	s.Add(k, "bridge", 150) // within 60 s of d and of far
	if got := mates(s, "a", all); !slices.Equal(got, []string{"b", "bridge", "c", "d", "far"}) {
		t.Fatalf("a gap filled: %v", got)
	}
	if got := mates(s, "farther", all); got != nil {
		t.Fatalf("farther is %d s after far: mates %v", 120+3*w-(120+w+1), got)
	}
	s.Remove("bridge")
	if got := mates(s, "far", all); got != nil {
		t.Fatalf("the gap reopened: far has mates %v", got)
	}
	// an id added again moves to its new time
	s.Add(k, "far", 30)
	if got := mates(s, "far", all); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Fatalf("far moved to 30 s: mates %v", got)
	}

	// window 0: equal times only
	s0 := NewSet(0)
	s0.Add(k, "x", 10)
	s0.Add(k, "y", 10)
	s0.Add(k, "z", 11)
	if got := mates(s0, "x", all); !slices.Equal(got, []string{"y"}) {
		t.Fatalf("window 0: mates of x %v, want y", got)
	}
}

// TestSet_HugeSessionLendsNothing: an author who stores more than MaxLend
// memories in one session gets no session lending, so no search walks all
// of them: not at one timestamp, not spread one a second.
func TestSet_HugeSessionLendsNothing(t *testing.T) {
	for _, spread := range []int64{0, 1} {
		s := NewSet(60)
		k := Of("d", "mallory", "Mallory: buy")
		for i := range MaxLend {
			s.Add(k, fmt.Sprint(i), int64(i)*spread)
		}
		if got := mates(s, "0", all); len(got) != MaxLend-1 {
			t.Fatalf("spread %d, %d members: %d mates, want %d", spread, MaxLend, len(got), MaxLend-1)
		}
		s.Add(k, "one more", int64(MaxLend)*spread)
		for _, id := range []string{"0", fmt.Sprint(MaxLend / 2), "one more"} {
			if got := mates(s, id, all); got != nil {
				t.Fatalf("spread %d, %d members: %s has %d mates, want none", spread, MaxLend+1, id, len(got))
			}
		}
	}
}

func TestOf_AuthorAndTurns(t *testing.T) {
	const turn = "Ann: we met at the lake"
	k := Of("d", "a", turn)
	if k == Of("d", "b", turn) || k != Of("e", "a", "Bo: hi") {
		t.Fatal("keys do not tell authors apart")
	}
	for _, text := range []string{"the lake is cold", "note: buy milk", ""} {
		if k := Of("d", "a", text); k != "" {
			t.Errorf("%q is no turn, session %q", text, k)
		}
	}
	if k := Of("", "a", turn); k != "" {
		t.Errorf("a message (no d tag) has session %q", k)
	}
}

func TestSet_LendAndAny(t *testing.T) {
	s := NewSet(60)
	k := Of("d", "a", "Ann: hi")
	for i, id := range []string{"a", "b", "c"} {
		s.Add(k, id, int64(i*30))
	}
	out := map[string]float64{}
	s.Lend("a", 0.5, func(id string) bool { return id != "c" }, out)
	s.Lend("b", 0, all, out) // lends nothing, adds no entry
	if len(out) != 1 || out["b"] != 0.5 {
		t.Fatalf("lent %v, want b 0.5 only", out)
	}
	if !s.Any("a", all, func(id string) bool { return id == "c" }) {
		t.Fatal("Any misses c")
	}
	if s.Any("a", func(id string) bool { return id != "c" }, func(id string) bool { return id == "c" }) {
		t.Fatal("Any sees an unreadable mate")
	}
}

func BenchmarkSet_Mates(b *testing.B) {
	s := NewSet(Window)
	k := Of("d", "a", "Ann: hi")
	// 10,000 sessions of 30 turns a second apart, a day apart
	for i := range 10000 {
		for j := range 30 {
			s.Add(k, fmt.Sprint(i, "/", j), int64(i)*86400+int64(j))
		}
	}
	b.ResetTimer()
	for i := range b.N {
		s.Mates(fmt.Sprint(i%10000, "/", 15), all, func(string) {})
	}
}
