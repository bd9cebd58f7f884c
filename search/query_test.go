package search

import (
	"testing"

	"github.com/snowclaw/snowclaw"
)

const hexPK = "3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d"

func TestParsedQuery_Match(t *testing.T) {
	doc := Doc{
		ID: "x", Tier: "group", Group: "core", Topic: "project/snowclaw/search",
		Tags: map[string][]string{"t": {"bleve"}}, Source: hexPK, Model: "anthropic/claude-opus-4-6",
		Confidence: 0.7, CreatedAt: 1704200000,
	}
	for _, tc := range []struct {
		q    string
		want bool
	}{
		{"anything", true},
		{"tier:group", true},
		{"tier:public", false},
		{"tier:public tier:group", true},
		{"t:project/snowclaw", true},
		{"t:project/snow", false},
		{"t:bleve", true},
		{"topic:project/snowclaw/search", true},
		{"source:" + hexPK, true},
		{"source:" + "0000000000000000000000000000000000000000000000000000000000000000", false},
		{"model:anthropic/*", true},
		{"model:meta/*", false},
		{"group:core", true},
		{"group:other", false},
		{"since:2024-01-02", true},
		{"since:2024-01-03", false},
		{"until:2024-01-02", true},
		{"until:2024-01-01", false},
		{"min_confidence:0.7", true},
		{"min_confidence:0.71", false},
		{"tier:group group:other", false},
	} {
		t.Run(tc.q, func(t *testing.T) {
			p := parsed(t, tc.q)
			if got := p.Match(doc); got != tc.want {
				t.Fatalf("Match = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParsedQuery_SearchWithAccept(t *testing.T) {
	ix := openTest(t, Options{})
	mustIndex(t, ix,
		Doc{ID: "pub", Tier: "public", Text: "error handling in rust"},
		Doc{ID: "grp", Tier: "group", Group: "core", Text: "error handling in rust, group notes"},
	)
	p := parsed(t, "rust errors tier:group")
	res := search(t, ix, Query{Text: p.Text, Accept: p.Match, IncludeSuperseded: p.IncludeSuperseded})
	if len(res) != 1 || res[0].Doc.ID != "grp" {
		t.Fatalf("got %v", ids(res))
	}
}

func parsed(t *testing.T, q string) ParsedQuery {
	t.Helper()
	sq, err := snowclaw.ParseSearch(q)
	if err != nil {
		t.Fatal(err)
	}
	return ParsedQuery{sq}
}
