package keyword

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"
)

// Postings read back from their encoding are the same postings: the
// same lists, bounds, free slots and counts (so every search ranks the
// same), and they go on taking and dropping docs as before.
func TestPersist_RoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for round := range 10 {
		parts, ids := zipfCorpus(r, 1+round%3, 300+r.Intn(2000), 50+r.Intn(1500))
		for i, p := range parts {
			got, err := DecodePostings(p.AppendEncoded(nil))
			if err != nil {
				t.Fatalf("round %d part %d: %v", round, i, err)
			}
			if !reflect.DeepEqual(got, p) {
				t.Fatalf("round %d part %d: decoded postings differ", round, i)
			}
		}
		id := func(p int, s uint32) string { return ids[p][s] }
		copies := make([]*Postings, len(parts))
		for i, p := range parts {
			copies[i], _ = DecodePostings(p.AppendEncoded(nil))
		}
		for range 10 {
			terms := []Term{{Term: fmt.Sprint("t", r.Intn(40)), Weight: 1}, {Term: fmt.Sprint("t", r.Intn(400)), Weight: 0.5}}
			if a, b := Search(parts, terms, 20, id, nil), Search(copies, terms, 20, id, nil); !reflect.DeepEqual(a, b) {
				t.Fatalf("search %v: %v before, %v after", terms, a, b)
			}
		}
		a := Analysed{Terms: []TermFreq{{Term: "t1", N: 2}, {Term: "fresh", N: 1}}, Length: 3}
		s1, s2 := parts[0].Add(a), copies[0].Add(a)
		if s1 != s2 || !reflect.DeepEqual(parts[0], copies[0]) {
			t.Fatalf("adding to the decoded postings: slot %d, want %d", s2, s1)
		}
	}
}

// No input makes DecodePostings panic or allocate beyond its size:
// truncations and flipped bytes of a real encoding are refused or read.
func TestPersist_DamageIsRefused(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	parts, _ := zipfCorpus(r, 1, 400, 300)
	enc := parts[0].AppendEncoded(nil)
	for cut := range len(enc) {
		if _, err := DecodePostings(enc[:cut]); err == nil {
			t.Fatalf("a cut at %d of %d bytes decoded", cut, len(enc))
		}
	}
	for range 5000 {
		b := append([]byte(nil), enc...)
		for range 1 + r.Intn(4) {
			b[r.Intn(len(b))] ^= byte(1 + r.Intn(255))
		}
		_, _ = DecodePostings(b) // must not panic
	}
}
