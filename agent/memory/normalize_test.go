package memory

import (
	"fmt"
	"testing"
)

var normalizeCases = []string{
	"", " ", "!!", "Likes tea!", "likes  tea", "likes tea", "don't", "dont", "Don’t", "doʼnt",
	"tea,coffee", "tea coffee", "tea, coffee", " tea", "tea ", "  ,tea,  ", "TEA", "ÉTÉ", "été",
	"a\xffb", "a\ufffdb", "ǅ", "ǆ", "İstanbul", "i̇stanbul", "'", "a'", "'a", "a.b", "a b", "a  b",
	"日本語", "日本 語", "Ⅻ", "ⅻ",
}

func TestSameNormalized(t *testing.T) {
	for _, a := range normalizeCases {
		if got, want := normalizesEmpty(a), Normalize(a) == ""; got != want {
			t.Errorf("normalizesEmpty(%q) = %v, Normalize gives %q", a, got, Normalize(a))
		}
		for _, b := range normalizeCases {
			if got, want := SameNormalized(a, b), Normalize(a) == Normalize(b); got != want {
				t.Errorf("SameNormalized(%q, %q) = %v, Normalize gives %q and %q", a, b, got, Normalize(a), Normalize(b))
			}
		}
	}
}

func FuzzSameNormalized(f *testing.F) {
	for i, a := range normalizeCases {
		f.Add(a, normalizeCases[(i+1)%len(normalizeCases)])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if SameNormalized(a, b) != (Normalize(a) == Normalize(b)) {
			t.Fatalf("SameNormalized(%q, %q) disagrees with Normalize: %q, %q", a, b, Normalize(a), Normalize(b))
		}
		if !SameNormalized(a, a) {
			t.Fatalf("SameNormalized(%q, itself) is false", a)
		}
	})
}

// A stated decision is checked against every one the group keeps; with a
// full record that must not normalise each of them again.
func TestAddDecision_FullRecordAllocs(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	for i := range maxDecisions {
		s.AddDecision("g", fmt.Sprintf("Ship release %d of the billing service on Friday", i), int64(i+1))
	}
	again := "ship release 7 of the billing service, on friday!"
	if s.AddDecision("g", again, 1000) {
		t.Fatal("a decision the group already has was added again")
	}
	if n := testing.AllocsPerRun(20, func() { s.AddDecision("g", again, 1000) }); n > 1 {
		t.Errorf("AddDecision of a known decision: %v allocations, want at most 1", n)
	}
}
