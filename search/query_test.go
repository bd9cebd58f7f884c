package search

import (
	"reflect"
	"testing"

	"github.com/nbd-wtf/go-nostr/nip19"
)

const hexPK = "3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d"

func TestParseQuery_Extensions(t *testing.T) {
	npub, err := nip19.EncodePublicKey(hexPK)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   string
		want ParsedQuery
	}{
		{"plain words", ParsedQuery{Text: "plain words"}},
		{"nip42 tier:group", ParsedQuery{Text: "nip42", Tiers: []string{"group"}}},
		{"t:rust topic:project/x", ParsedQuery{Topics: []string{"rust", "project/x"}}},
		{"a source:" + npub, ParsedQuery{Text: "a", Sources: []string{hexPK}}},
		{"source:" + hexPK, ParsedQuery{Sources: []string{hexPK}}},
		{`model:"anthropic/*" x`, ParsedQuery{Text: "x", Models: []string{"anthropic/*"}}},
		{"group:core", ParsedQuery{Groups: []string{"core"}}},
		{"since:2024-01-02 until:2024-01-02", ParsedQuery{Since: 1704153600, Until: 1704153600 + 86399}},
		{"since:1700000000", ParsedQuery{Since: 1700000000}},
		{"min_confidence:0.8", ParsedQuery{MinConfidence: 0.8}},
		{"include:superseded old", ParsedQuery{Text: "old", IncludeSuperseded: true}},
		{"foo:bar keep include:other", ParsedQuery{Text: "keep"}},
		{`topic:"a b c" rest`, ParsedQuery{Text: "rest", Topics: []string{"a b c"}}},
		{`"quoted tier:public" x`, ParsedQuery{Text: `"quoted tier:public" x`}},
		{"see https://example.com at 10:30", ParsedQuery{Text: "see https://example.com at 10:30"}},
		{"TIER:Public", ParsedQuery{Tiers: []string{"public"}}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseQuery(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseQuery_Errors(t *testing.T) {
	for _, in := range []string{
		"tier:secret", "source:npub1xyz", "source:abcd", "since:yesterday",
		"until:2024-13-01", "min_confidence:2", "min_confidence:NaN", "model:[",
	} {
		t.Run(in, func(t *testing.T) {
			if _, err := ParseQuery(in); err == nil {
				t.Fatalf("no error for %q", in)
			}
		})
	}
}

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
			p, err := ParseQuery(tc.q)
			if err != nil {
				t.Fatal(err)
			}
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
	p, err := ParseQuery("rust errors tier:group")
	if err != nil {
		t.Fatal(err)
	}
	res := search(t, ix, Query{Text: p.Text, Accept: p.Match, IncludeSuperseded: p.IncludeSuperseded})
	if len(res) != 1 || res[0].Doc.ID != "grp" {
		t.Fatalf("got %v", ids(res))
	}
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{
		"", "plain", "tier:public t:rust hello", `topic:"a b" "phrase here" x`,
		"source:" + hexPK, "since:2024-01-01 until:1700000000", "min_confidence:0.5",
		"include:superseded", "unknown:thing word", `t:"unterminated`, `"`, `a:"`,
		"https://x.y/z 10:30", "t://x", `x"y z"`, `t:"//x"`, "model:meta/llama-*",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseQuery(s)
		if err != nil {
			return
		}
		_ = p.Match(Doc{Tier: "public", Tags: map[string][]string{"t": {"x"}}})
		out := p.String()
		p2, err := ParseQuery(out)
		if err != nil {
			t.Fatalf("reparse of %q (from %q): %v", out, s, err)
		}
		if !reflect.DeepEqual(p, p2) {
			t.Fatalf("not idempotent:\n in  %q\n out %q\n p1 %+v\n p2 %+v", s, out, p, p2)
		}
		if p2.String() != out {
			t.Fatalf("String not stable: %q vs %q", out, p2.String())
		}
	})
}
