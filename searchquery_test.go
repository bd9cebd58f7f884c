package snowclaw_test

import (
	"reflect"
	"testing"

	"github.com/nbd-wtf/go-nostr/nip19"
	"github.com/snowclaw/snowclaw"
)

const hexPK = "3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d"

func TestParseSearch_Extensions(t *testing.T) {
	npub, err := nip19.EncodePublicKey(hexPK)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   string
		want snowclaw.SearchQuery
	}{
		{"plain words", snowclaw.SearchQuery{Text: "plain words"}},
		{"nip42 tier:group", snowclaw.SearchQuery{Text: "nip42", Tiers: []string{"group"}}},
		{"t:rust topic:project/x", snowclaw.SearchQuery{Topics: []string{"rust", "project/x"}}},
		{"a source:" + npub, snowclaw.SearchQuery{Text: "a", Sources: []string{hexPK}}},
		{"source:" + hexPK, snowclaw.SearchQuery{Sources: []string{hexPK}}},
		{`model:"anthropic/*" x`, snowclaw.SearchQuery{Text: "x", Models: []string{"anthropic/*"}}},
		{"group:core", snowclaw.SearchQuery{Groups: []string{"core"}}},
		{"since:2024-01-02 until:2024-01-02", snowclaw.SearchQuery{Since: 1704153600, Until: 1704153600 + 86399}},
		{"since:1700000000", snowclaw.SearchQuery{Since: 1700000000}},
		{"min_confidence:0.8", snowclaw.SearchQuery{MinConfidence: 0.8}},
		{"include:superseded old", snowclaw.SearchQuery{Text: "old", IncludeSuperseded: true}},
		{"include:remote nostr", snowclaw.SearchQuery{Text: "nostr", IncludeRemote: true}},
		{"INCLUDE:Remote include:superseded", snowclaw.SearchQuery{IncludeRemote: true, IncludeSuperseded: true}},
		{"foo:bar keep include:other", snowclaw.SearchQuery{Text: "keep"}},
		{`topic:"a b c" rest`, snowclaw.SearchQuery{Text: "rest", Topics: []string{"a b c"}}},
		{`"quoted tier:public" x`, snowclaw.SearchQuery{Text: `"quoted tier:public" x`}},
		{"see https://example.com at 10:30", snowclaw.SearchQuery{Text: "see https://example.com at 10:30"}},
		{"TIER:Public", snowclaw.SearchQuery{Tiers: []string{"public"}}},
		{"plans explain:true", snowclaw.SearchQuery{Text: "plans", Explain: true}},
		{"plans explain:no", snowclaw.SearchQuery{Text: "plans"}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := snowclaw.ParseSearch(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseSearch_Errors(t *testing.T) {
	for _, in := range []string{
		"tier:secret", "source:npub1xyz", "source:abcd", "since:yesterday",
		"until:2024-13-01", "min_confidence:2", "min_confidence:NaN", "model:[",
	} {
		t.Run(in, func(t *testing.T) {
			if _, err := snowclaw.ParseSearch(in); err == nil {
				t.Fatalf("no error for %q", in)
			}
		})
	}
}

func FuzzParseSearch(f *testing.F) {
	for _, s := range []string{
		"", "plain", "tier:public t:rust hello", `topic:"a b" "phrase here" x`,
		"source:" + hexPK, "since:2024-01-01 until:1700000000", "min_confidence:0.5",
		"include:superseded", "include:remote x", "explain:true x", "unknown:thing word", `t:"unterminated`, `"`, `a:"`,
		"https://x.y/z 10:30", "t://x", `x"y z"`, `t:"//x"`, "model:meta/llama-*",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := snowclaw.ParseSearch(s)
		if err != nil {
			return
		}
		out := p.String()
		p2, err := snowclaw.ParseSearch(out)
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

// TestSearchQuery_ScopedTiers: what the read rule treats as asking for
// scoped data (policies.Visibility.CheckFilter).
func TestSearchQuery_ScopedTiers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"plain", nil},
		{"tier:public x", nil},
		{"tier:group", []string{"group"}},
		{"tier:PRIVATE tier:public tier:private tier:internal", []string{"private", "internal"}},
		{`"tier:private"`, nil}, // quoted: text, not an extension
	} {
		q, err := snowclaw.ParseSearch(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := q.ScopedTiers(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: ScopedTiers = %v, want %v", tc.in, got, tc.want)
		}
	}
}
