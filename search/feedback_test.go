package search

import "testing"

// TestFeedback_ReordersNeverAdmits: pseudo-relevance feedback lifts the
// hit that shares words with the best hits, and never brings in a doc
// that holds no query term (it would not pass the relevance floor).
func TestFeedback_ReordersNeverAdmits(t *testing.T) {
	docs := []Doc{
		{ID: "best", Text: "Melanie painted a sunset over the lake with watercolors on canvas"},
		{ID: "also", Text: "Melanie said the canvas and watercolors were a gift"},
		{ID: "near", Text: "the lake sunset canvas watercolors again"},
		{ID: "off", Text: "Melanie went to a concert downtown"},
		{ID: "none", Text: "watercolors canvas sunset lake"},
	}
	var filler []Doc
	for i := range 200 {
		filler = append(filler, Doc{ID: "f" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Text: "unrelated filler about trains and weather"})
	}
	for _, prf := range []bool{false, true} {
		ix := openTest(t, Options{VectorWeight: 0, BM25Weight: 1})
		if !prf {
			ix.tune.prfDocs = 0
		}
		mustIndex(t, ix, append(filler, docs...)...)
		res := search(t, ix, Query{Text: "what did Melanie paint", Limit: 10})
		pos := map[string]int{}
		for i, r := range res {
			pos[r.Doc.ID] = i + 1
		}
		if pos["none"] != 0 || pos["near"] != 0 {
			t.Fatalf("prf %v: a doc without a query term came in: %v", prf, ids(res))
		}
		if pos["best"] == 0 || pos["also"] == 0 || pos["off"] == 0 {
			t.Fatalf("prf %v: %v", prf, ids(res))
		}
		if prf && pos["also"] > pos["off"] {
			t.Fatalf("with feedback the doc sharing the best hit's words should rank above the off-topic one: %v", ids(res))
		}
	}
}
