package search

import (
	"reflect"
	"testing"
	"time"
)

func TestQueryMonths(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want []monthSpan
	}{
		{"When did Melanie go camping in June?", []monthSpan{{time.June, 0}}},
		{"What did they paint in July 2023?", []monthSpan{{time.July, 2023}}},
		{"What did Gina find on 1 February, 2023?", []monthSpan{{time.February, 2023}}},
		{"painting shown on October 13, 2023", []monthSpan{{time.October, 2023}}},
		{"accepted for on May 23, 2023?", []monthSpan{{time.May, 2023}}},
		{"what may she have meant", nil}, // "may" alone is a verb
		{"in may 2022", []monthSpan{{time.May, 2022}}},
		{"no dates here, marching band", nil},
		{"from march to april", []monthSpan{{time.March, 0}, {time.April, 0}}},
	} {
		if got := queryMonths(tc.q); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.q, got, tc.want)
		}
	}
}

func TestDateFactor(t *testing.T) {
	at := func(y int, m time.Month, d int) int64 { return time.Date(y, m, d, 12, 0, 0, 0, time.UTC).Unix() }
	june := []monthSpan{{time.June, 0}}
	june23 := []monthSpan{{time.June, 2023}}
	for _, tc := range []struct {
		spans []monthSpan
		at    int64
		want  float64
	}{
		{june, at(2023, time.June, 3), 2},
		{june, at(2021, time.June, 30), 2},
		{june, at(2023, time.July, 9), 2}, // told a month later
		{june, at(2023, time.August, 1), 1},
		{june, at(2023, time.May, 31), 1},
		{june23, at(2023, time.June, 3), 2},
		{june23, at(2022, time.June, 3), 1},
		{nil, at(2023, time.June, 3), 1},
		{june, 0, 1},
	} {
		if got := dateFactor(tc.spans, &Doc{CreatedAt: tc.at}, 1); got != tc.want {
			t.Errorf("%v at %s: %v, want %v", tc.spans, time.Unix(tc.at, 0).UTC().Format(time.DateOnly), got, tc.want)
		}
	}
}

// TestSearch_DateLiftsTheMonth: of two docs that match alike, the one
// written in the month the query names ranks first.
func TestSearch_DateLiftsTheMonth(t *testing.T) {
	ix := openTest(t, Options{})
	may := time.Date(2023, time.May, 10, 0, 0, 0, 0, time.UTC).Unix()
	aug := time.Date(2023, time.August, 10, 0, 0, 0, 0, time.UTC).Unix()
	mustIndex(t, ix,
		Doc{ID: "aug", Text: "we went camping by the lake", CreatedAt: aug},
		Doc{ID: "may", Text: "we went camping by the lake", CreatedAt: may},
	)
	for q, first := range map[string]string{"camping in August": "aug", "camping in May 2023": "may"} {
		res := search(t, ix, Query{Text: q, Explain: true})
		if len(res) != 2 || res[0].Doc.ID != first || res[0].Explain.Date != 2 || res[1].Explain.Date != 1 {
			t.Errorf("%q: %v, want %s first with date factor 2", q, ids(res), first)
		}
	}
}
