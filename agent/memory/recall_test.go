package memory

import (
	"testing"
	"time"

	"github.com/snowclaw/snowclaw"
)

func TestStore_Recall(t *testing.T) {
	s, clk := newTestStore(t, Options{})
	add := func(text, detail, group string, age time.Duration) {
		s.Remember(Item{Text: text, Detail: detail, Group: group, Tier: snowclaw.TierGroup,
			CreatedAt: clk.Now().Add(-age).Unix(), UpdatedAt: clk.Now().Add(-age).Unix()})
	}
	add("Alice prefers green tea", "", "g", 90*24*time.Hour)
	add("Bob prefers coffee", "", "g", time.Hour)
	add("Green tea is served at standups", "", "g", 24*time.Hour)
	add("Deploys happen on Friday", "tea break after deploy", "g", time.Minute)
	add("Green tea secret", "", "other", 0)
	add("用户喜欢简洁的中文回复", "", "g", time.Hour)

	inG := func(it Item) bool { return it.Group == "g" }
	tests := []struct {
		name   string
		query  string
		filter func(Item) bool
		n      int
		want   []string
	}{
		{"full match beats partial and recency wins ties", "green tea", inG, 10,
			[]string{"Green tea is served at standups", "Alice prefers green tea", "Deploys happen on Friday"}},
		{"n caps", "green tea", inG, 1, []string{"Green tea is served at standups"}},
		{"filter keeps other groups out", "secret", inG, 10, nil},
		{"related forms", "preferences", inG, 2, []string{"Bob prefers coffee", "Alice prefers green tea"}},
		{"stop words only gives newest", "what do you know about me", inG, 2,
			[]string{"Deploys happen on Friday", "Bob prefers coffee"}},
		{"no overlap gives nothing", "kubernetes", inG, 10, nil},
		{"unspaced script", "喜欢简洁", inG, 1, []string{"用户喜欢简洁的中文回复"}},
		{"nil filter sees all", "secret", nil, 10, []string{"Green tea secret"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := s.Recall(tc.query, tc.filter, tc.n)
			var texts []string
			for _, it := range got {
				texts = append(texts, it.Text)
			}
			if len(texts) != len(tc.want) {
				t.Fatalf("Recall = %q, want %q", texts, tc.want)
			}
			for i := range texts {
				if texts[i] != tc.want[i] {
					t.Fatalf("Recall = %q, want %q", texts, tc.want)
				}
			}
		})
	}
}

func TestStore_RecallCountsHitsWithoutDirtying(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	it, _ := s.Remember(Item{Text: "likes tea", Tier: snowclaw.TierPublic})
	s.TakeDirty()
	s.Recall("tea", nil, 5)
	got := s.Recall("tea", nil, 5)
	if len(got) != 1 || got[0].Hits != 2 {
		t.Fatalf("Recall = %+v", got)
	}
	if stored, _ := s.Item(it.ID); stored.Hits != 2 {
		t.Errorf("stored hits = %d, want 2", stored.Hits)
	}
	if s.Dirty() != 0 {
		t.Errorf("a read marked %d records dirty", s.Dirty())
	}
}

func TestRelated_Cases(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"prefers", "preferences", true},
		{"deploy", "deployed", true},
		{"test", "tests", true},
		{"tea", "team", false},
		{"steam", "stem", false},
		{"friday", "fried", false},
		{"prefer", "present", false},
	}
	for _, tc := range tests {
		if got := related(tc.a, tc.b); got != tc.want {
			t.Errorf("related(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
