package locomo

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestNormalizeID_Cases(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"D1:3", "D1:3"},
		{"D:11:26", "D11:26"},
		{"D30:05", "D30:5"},
		{" D2:8 ", "D2:8"},
		{"D", ""},
		{"S1:2", ""},
	} {
		if got := normalizeID(tc.in); got != tc.want {
			t.Errorf("normalizeID(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMetrics_Cases(t *testing.T) {
	ranked := []string{"a", "b", "c", "d"}
	for _, tc := range []struct {
		name       string
		gold       []string
		r1, r3, nd float64
	}{
		{"first", []string{"a"}, 1, 1, 1},
		{"second", []string{"b"}, 0, 1, 1 / math.Log2(3)},
		{"half", []string{"a", "z"}, 0.5, 0.5, 1 / (1 + 1/math.Log2(3))},
		{"none", []string{"z"}, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RecallAt(ranked, tc.gold, 1); got != tc.r1 {
				t.Errorf("recall@1 %v, want %v", got, tc.r1)
			}
			if got := RecallAt(ranked, tc.gold, 3); got != tc.r3 {
				t.Errorf("recall@3 %v, want %v", got, tc.r3)
			}
			if got := NDCGAt(ranked, tc.gold, 10); math.Abs(got-tc.nd) > 1e-12 {
				t.Errorf("ndcg %v, want %v", got, tc.nd)
			}
		})
	}
}

// TestLoad_Small builds a two-session sample by hand and checks docs, gold
// normalisation and the skipping rules.
func TestLoad_Small(t *testing.T) {
	sample := []map[string]any{{
		"sample_id": "s1",
		"conversation": map[string]any{
			"speaker_a":           "Ann",
			"speaker_b":           "Bo",
			"session_1_date_time": "1:56 pm on 8 May, 2023",
			"session_1": []map[string]string{
				{"speaker": "Ann", "dia_id": "D1:1", "text": "hi"},
				{"speaker": "Bo", "dia_id": "D1:2", "text": "I adopted a cat"},
			},
			"session_2_date_time": "10:00 am on 9 May, 2023",
			"session_2": []map[string]string{
				{"speaker": "Ann", "dia_id": "D2:1", "text": "how is the cat?"},
			},
		},
		"qa": []map[string]any{
			{"question": "What did Bo adopt?", "answer": "a cat", "evidence": []string{"D1:02; D:2:1", "D9:9"}, "category": 4},
			{"question": "Unanswerable?", "evidence": []string{}, "category": 5},
			{"question": "Gone?", "evidence": []string{"D7:1"}, "category": 1},
		},
	}}
	b, err := json.Marshal(sample)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "l.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	convs, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	c := convs[0]
	docs := c.Docs()
	if len(docs) != 3 || docs[1].ID != "s1/D1:2" || docs[1].Text != "Bo: I adopted a cat" {
		t.Fatalf("docs %+v", docs)
	}
	if docs[2].CreatedAt <= docs[1].CreatedAt || docs[1].CreatedAt <= docs[0].CreatedAt {
		t.Fatal("turns not in time order")
	}
	if len(c.Questions) != 1 {
		t.Fatalf("questions %+v", c.Questions)
	}
	q := c.Questions[0]
	if len(q.Gold) != 2 || q.Gold[0] != "s1/D1:2" || q.Gold[1] != "s1/D2:1" {
		t.Fatalf("gold %v", q.Gold)
	}
}
