package search

import (
	"math"
	"testing"
)

func TestLengthPrior_Factor(t *testing.T) {
	// words as state.keep counts them when a doc is indexed
	msg := func(id, text string) *Doc {
		return &Doc{ID: id, Kind: 9, Group: "g", CreatedAt: 1, Text: text, words: int32(countWords(text))}
	}
	ts := newThreadSet()
	// Messages of 2, 6 and 10 words: mean 6. The memory is no message and
	// must not count.
	for _, d := range []*Doc{
		msg("short", "ok thanks"),
		msg("mean", "we went camping at the lake"),
		msg("long", "the kids loved the museum and we stayed until closing"),
		{ID: "memo", Kind: 30078, D: "x", Text: "tea"},
	} {
		ts.add(d)
	}
	cases := []struct {
		name  string
		doc   *Doc
		alpha float64
		want  float64
	}{
		{"ShorterThanMean", msg("short", ""), 0.6, math.Pow(2.0/6, 0.6)},
		{"MeanLength", msg("mean", ""), 0.6, 1},
		{"LongerThanMean", msg("long", ""), 0.6, 1},
		{"Off", msg("short", ""), 0, 1},
		{"NotAMessage", &Doc{ID: "memo", Kind: 30078, D: "x"}, 0.6, 1},
		{"Unknown", msg("other", ""), 0.6, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// the factor is looked up by id: the text here is not read
			if got := ts.lengthFactor(tc.doc, tc.alpha, len(ts.words), ts.wordSum); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("lengthFactor = %v, want %v", got, tc.want)
			}
		})
	}
	// Removing a message takes it out of the mean: 6 and 10 words, mean 8.
	ts.remove(msg("short", ""))
	if got, want := ts.lengthFactor(msg("mean", ""), 1, len(ts.words), ts.wordSum), 6.0/8; math.Abs(got-want) > 1e-12 {
		t.Errorf("after remove: %v, want %v", got, want)
	}
}

func TestLengthPrior_Ranking(t *testing.T) {
	chat := func(id string, at int64, text string) Doc {
		return Doc{ID: id, Kind: 9, Group: "g", CreatedAt: at, Text: text}
	}
	filler := []Doc{
		chat("f1", 2, "ben: how was your week, anything new going on at home?"),
		chat("f2", 3, "mia: busy but good, the garden finally has tomatoes again"),
		chat("f3", 4, "ben: lucky you, mine all died in the heat last summer"),
		chat("f4", 5, "mia: water them early in the morning and they will be fine"),
	}
	cases := []struct {
		name string
		docs []Doc
		want string // first result
	}{
		{"ChatStatementBeatsReaction", append([]Doc{
			chat("react", 1, "ben: pottery, wow!"),
			chat("statement", 6, "mia: I signed up for a pottery class and made two bowls with the kids"),
		}, filler...), "statement"},
		// Memories are not small talk: a short one keeps its BM25 lead.
		{"MemoryUnaffected", []Doc{
			{ID: "short", Kind: 30078, D: "a", Text: "mia likes pottery", CreatedAt: 1},
			{ID: "long", Kind: 30078, D: "b", Text: "mia signed up for a pottery class and made two bowls with the kids", CreatedAt: 2},
		}, "short"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ix := openTest(t, Options{})
			mustIndex(t, ix, tc.docs...)
			res := search(t, ix, Query{Text: "pottery", Limit: 2})
			if len(res) == 0 || res[0].Doc.ID != tc.want {
				t.Fatalf("got %v, want %s first", ids(res), tc.want)
			}
		})
	}
}
