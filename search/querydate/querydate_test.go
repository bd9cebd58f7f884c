package querydate

import (
	"reflect"
	"testing"
	"time"
)

func TestMonths(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want []Month
	}{
		{"When did Melanie go camping in June?", []Month{{time.June, 0}}},
		{"What did they paint in July 2023?", []Month{{time.July, 2023}}},
		{"What did Gina find on 1 February, 2023?", []Month{{time.February, 2023}}},
		{"painting shown on October 13, 2023", []Month{{time.October, 2023}}},
		{"accepted for on May 23, 2023?", []Month{{time.May, 2023}}},
		{"what may she have meant", nil}, // "may" alone is a verb
		{"in may 2022", []Month{{time.May, 2022}}},
		{"no dates here, marching band", nil},
		{"from march to april", []Month{{time.March, 0}, {time.April, 0}}},
	} {
		if got := Months(tc.q); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.q, got, tc.want)
		}
	}
}

func TestFactor(t *testing.T) {
	at := func(y int, m time.Month, d int) int64 { return time.Date(y, m, d, 12, 0, 0, 0, time.UTC).Unix() }
	june := []Month{{time.June, 0}}
	june23 := []Month{{time.June, 2023}}
	for _, tc := range []struct {
		spans []Month
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
		if got := Factor(tc.spans, tc.at, 1); got != tc.want {
			t.Errorf("%v at %s: %v, want %v", tc.spans, time.Unix(tc.at, 0).UTC().Format(time.DateOnly), got, tc.want)
		}
	}
}
