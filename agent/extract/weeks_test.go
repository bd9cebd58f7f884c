package extract

import (
	"testing"
	"time"
)

func TestISOWeekEnd(t *testing.T) {
	for _, tc := range []struct {
		week string
		want string
	}{
		{"2026-W48", "2026-11-30"},
		{"2026-W01", "2026-01-05"},
		{"2020-W53", "2021-01-04"},
		{"2026-W00", ""},
		{"garbage", ""},
	} {
		got := ISOWeekEnd(tc.week)
		if tc.want == "" {
			if got != 0 {
				t.Errorf("%s: %d, want 0", tc.week, got)
			}
			continue
		}
		if d := time.Unix(got, 0).UTC().Format(time.DateOnly); d != tc.want {
			t.Errorf("%s ends %s, want %s", tc.week, d, tc.want)
		}
		// the week of the moment just before its end is that week
		if w := ISOWeek(got - 1); w != tc.week {
			t.Errorf("%s: the second before its end is in %s", tc.week, w)
		}
	}
}

func TestShareCut(t *testing.T) {
	msgs := []Message{{At: 10, Text: "a"}, {At: 20, Text: "b"}, {At: 30, Text: "c"}, {At: 40, Text: "d"}}
	one := func(ms []Message) int { return len(ms) } // a token per message
	for _, tc := range []struct {
		share float64
		want  int64
	}{{0.5, 30}, {0.7, 40}, {0.25, 20}, {1, 41}} {
		if got := ShareCut(msgs, tc.share, one); got != tc.want {
			t.Errorf("share %v: cut %d, want %d", tc.share, got, tc.want)
		}
	}
}
