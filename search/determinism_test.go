package search

import (
	"fmt"
	"testing"
)

// TestSearch_SameQuerySameScores: a memory that holds query words and
// sits in a session with others that do sums its own score and the shares
// its mates lend it. Summed in map order, those floats came out different
// in the last bit from one search to the next, which reorders ties; the
// same query on the same index must give the same scores every time.
func TestSearch_SameQuerySameScores(t *testing.T) {
	ix := openTest(t, Options{})
	var docs []Doc
	words := []string{"lake", "sunrise", "paint", "canvas", "oil", "morning", "colour", "brush"}
	for i := range 24 {
		text := "Melanie:"
		for j, w := range words {
			if (i>>(j%5))&1 == 1 || i%len(words) == j {
				text += " " + w
			}
		}
		docs = append(docs, turn(fmt.Sprintf("t%02d", i), "a", 100, text+fmt.Sprintf(" word%d", i)))
	}
	mustIndex(t, ix, docs...)
	q := Query{Text: "Melanie lake sunrise paint canvas oil morning colour brush", Explain: true, Limit: 30}
	want := map[string]float64{}
	for _, r := range search(t, ix, q) {
		want[r.Doc.ID] = r.Explain.Final
	}
	if len(want) < 20 {
		t.Fatalf("%d results, want the session", len(want))
	}
	for range 200 {
		for _, r := range search(t, ix, q) {
			if r.Explain.Final != want[r.Doc.ID] {
				t.Fatalf("%s: final %v, before %v", r.Doc.ID, r.Explain.Final, want[r.Doc.ID])
			}
		}
	}
}
