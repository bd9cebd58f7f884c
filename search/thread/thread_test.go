package thread

import (
	"math"
	"testing"
)

func TestLengthPrior_Factor(t *testing.T) {
	ts := NewSet()
	// Messages of 2, 6 and 10 words in thread "9/g": mean 6. A doc in no
	// thread ("") must not count.
	ts.Add("9/g", 1, "short", 2)
	ts.Add("9/g", 1, "mean", 6)
	ts.Add("9/g", 1, "long", 10)
	ts.Add("", 1, "memo", 1)
	cases := []struct {
		name  string
		id    string
		alpha float64
		want  float64
	}{
		{"ShorterThanMean", "short", 0.6, math.Pow(2.0/6, 0.6)},
		{"MeanLength", "mean", 0.6, 1},
		{"LongerThanMean", "long", 0.6, 1},
		{"Off", "short", 0, 1},
		{"NotAMessage", "memo", 0.6, 1},
		{"Unknown", "other", 0.6, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ts.LengthFactor(tc.id, tc.alpha, len(ts.words), ts.wordSum); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("LengthFactor = %v, want %v", got, tc.want)
			}
		})
	}
	// Removing a message takes it out of the mean: 6 and 10 words, mean 8.
	ts.Remove("9/g", 1, "short")
	if got, want := ts.LengthFactor("mean", 1, len(ts.words), ts.wordSum), 6.0/8; math.Abs(got-want) > 1e-12 {
		t.Errorf("after remove: %v, want %v", got, want)
	}
}

func TestNeighbours(t *testing.T) {
	ts := NewSet()
	for i, id := range []string{"a", "b", "c", "d", "e"} {
		ts.Add("9/g", int64(i), id, 3)
	}
	ts.Add("9/h", 2, "other", 3)
	got := map[string]int{}
	ts.Neighbours("9/g", 2, "c", 1, func(id string, dist int) { got[id] = dist })
	if len(got) != 2 || got["b"] != -1 || got["d"] != 1 {
		t.Fatalf("neighbours of c: %v", got)
	}
}
