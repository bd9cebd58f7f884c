package search

import (
	"testing"
)

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
