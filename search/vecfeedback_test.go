package search

import (
	"fmt"
	"testing"
)

// TestSearch_VectorFeedback: two memories hold the query's one word
// once; the one about what the best hit is about (hiking, in other words)
// ranks first only because the vector side searches toward the best
// hits' vectors, and an unrelated query still finds nothing.
func TestSearch_VectorFeedback(t *testing.T) {
	ix := openTest(t, Options{BM25Weight: 1, VectorWeight: 1, RRFK: 10})
	mem := func(id, text string) Doc {
		return Doc{ID: id, Kind: 30078, Pubkey: "a", CreatedAt: 100, D: "snow:memory:" + id, Text: text, Scope: "public"}
	}
	// the rest of the index is about other things, so the hits' mean is
	// not the corpus mean the query is centred on (fuse.go)
	for i, topic := range []string{"cooking pasta with tomato sauce and basil", "the piano lesson on scales and chords",
		"tax forms due to the accountant in april", "the cat sleeps on the warm radiator", "a new phone with a cracked screen",
		"painting the kitchen wall a pale blue", "the dentist appointment moved to friday", "chess openings and endgame puzzles"} {
		mustIndex(t, ix, mem(fmt.Sprintf("filler%d", i), topic))
	}
	mustIndex(t, ix,
		mem("best1", "weekend weekend: a hike up the mountain trail to the summit, hiking boots and backpack"),
		mem("best2", "weekend weekend: the summit trail was steep, my backpack heavy and my boots muddy"),
		mem("best3", "weekend weekend: mountain hiking again, the trail from the lake up to the summit"),
		mem("about", "weekend, then the mountain summit again with backpack and boots on the trail"),
		mem("other", "weekend sale of the old garage furniture and the yard tools, bring cash"),
	)
	rank := func(feedback float64) map[string]Explain {
		ix.tune.vecFeedback = feedback
		out := map[string]Explain{}
		for _, r := range search(t, ix, Query{Text: "weekend", Explain: true}) {
			out[r.Doc.ID] = *r.Explain
		}
		return out
	}
	// the index is tiny, so the test pulls harder than the default does
	// on thousands of turns; the mechanism is the same
	off, on := rank(0), rank(3)
	if on["about"].VectorRank >= on["other"].VectorRank || on["about"].Final <= on["other"].Final {
		t.Fatalf("with feedback the hike's mate does not outrank the sale: about %+v, other %+v", on["about"], on["other"])
	}
	if off["about"].VectorRank < off["other"].VectorRank {
		t.Fatalf("the fixture ranks the mate first without feedback too: %+v", off)
	}
	if res := search(t, ix, Query{Text: "zzzqqq xylophone"}); len(res) != 0 {
		t.Fatalf("an unrelated query found %v", ids(res))
	}
}
