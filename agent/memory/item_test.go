package memory

import (
	"strings"
	"testing"

	"github.com/snowclaw/snowclaw"
)

func TestNormalize_Cases(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Likes tea!", "likes tea"},
		{"  likes   TEA  ", "likes tea"},
		{"don't panic", "dont panic"},
		{"tea,coffee;and «milk»", "tea coffee and milk"},
		{"Éclair\t\nÜber", "éclair über"},
		{"记住：用户喜欢简洁的中文回复。", "记住 用户喜欢简洁的中文回复"},
		{"!!!", ""},
		{"", ""},
	}
	for _, tc := range tests {
		if got := Normalize(tc.in); got != tc.want {
			t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestItemID_Cases(t *testing.T) {
	base := ItemID(snowclaw.TierGroup, "g1", "Likes tea")
	tests := []struct {
		name  string
		id    string
		equal bool
	}{
		{"same fact other wording", ItemID(snowclaw.TierGroup, "g1", "likes  TEA!"), true},
		{"other scope", ItemID(snowclaw.TierGroup, "g2", "Likes tea"), false},
		{"other tier", ItemID(snowclaw.TierPublic, "g1", "Likes tea"), false},
		{"other text", ItemID(snowclaw.TierGroup, "g1", "Likes coffee"), false},
	}
	if len(base) != 12 || strings.Trim(base, "0123456789abcdef") != "" {
		t.Fatalf("ItemID = %q, want 12 hex digits", base)
	}
	for _, tc := range tests {
		if (tc.id == base) != tc.equal {
			t.Errorf("%s: id %s vs %s, want equal=%v", tc.name, tc.id, base, tc.equal)
		}
	}
}

func TestItem_Valid(t *testing.T) {
	_, pk := keypair(t)
	tests := []struct {
		name string
		it   Item
		ok   bool
	}{
		{"public", Item{Text: "x", Tier: snowclaw.TierPublic}, true},
		{"internal", Item{Text: "x", Tier: snowclaw.TierInternal}, true},
		{"group", Item{Text: "x", Tier: snowclaw.TierGroup, Group: "g"}, true},
		{"group without group", Item{Text: "x", Tier: snowclaw.TierGroup}, false},
		{"private", Item{Text: "x", Tier: snowclaw.TierPrivate, Subject: pk}, true},
		{"private without subject", Item{Text: "x", Tier: snowclaw.TierPrivate}, false},
		{"empty text", Item{Text: "  ", Tier: snowclaw.TierPublic}, false},
		{"unknown tier", Item{Text: "x", Tier: "secret"}, false},
	}
	for _, tc := range tests {
		if err := tc.it.Valid(); (err == nil) != tc.ok {
			t.Errorf("%s: Valid() = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

func TestTruncate_RuneBoundary(t *testing.T) {
	s := strings.Repeat("é", 10) // 2 bytes each
	got := truncate(s, 5)
	if got != "éé" {
		t.Errorf("truncate = %q, want %q", got, "éé")
	}
}

func TestMayAnswerAt(t *testing.T) {
	for topic, want := range map[string]bool{
		"user/alice/home":            true,
		"ops/deploy-day":             true,
		"":                           false,
		"/user/alice":                false,
		"lesson/abc":                 false,
		"agent/archive/0123456789ab": false,
		"agent/notes/x":              false,
		"group/g/summary/2026-W47":   false,
		"a\nb":                       false,
		strings.Repeat("x", 201):     false,
	} {
		if got := MayAnswerAt(topic); got != want {
			t.Errorf("MayAnswerAt(%q) = %v, want %v", topic, got, want)
		}
	}
}
