package speaker

import (
	"reflect"
	"testing"
)

func TestOf_Cases(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"Melanie: I painted a sunrise", "melanie"},
		{"Dr. Jane Doe: take two", "dr. jane doe"},
		{"O'Neil-Smith: hi", "o'neil-smith"},
		{"Melanie:", "melanie"},
		{"melanie: lower case is no name", ""},
		{"The plan for today: rest", ""}, // four words, the first capitalised only
		{"http://example.com", ""},
		{"Meeting at 10:30", ""},
		{"Note:nospace", ""},
		{": nobody", ""},
		{"A Very Long Name Indeed Here: x", ""},
		{"Björn: hej", "björn"},
		{"", ""},
		{"Alice (admin): hi", ""},
	} {
		if got := Of(tc.text); got != tc.want {
			t.Errorf("Of(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestNamed_Cases(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"What did Melanie paint?", []string{"what", "melanie"}},
		{"What do Melanie's kids like?", []string{"what", "melanie"}},
		{"when did caroline go", nil},
		{"Did Jon and Gina meet in May?", []string{"did", "jon", "gina", "may"}},
	} {
		got := Named(tc.q)
		want := map[string]bool{}
		for _, w := range tc.want {
			want[w] = true
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Named(%q) = %v, want %v", tc.q, got, want)
		}
	}
}

func TestFactor_Cases(t *testing.T) {
	names := Named("What did Melanie and Jane say?")
	for _, tc := range []struct {
		speaker string
		boost   float64
		want    float64
	}{
		{"melanie", 1, 2},
		{"jane doe", 1, 2}, // the first name is enough
		{"caroline", 1, 1},
		{"", 1, 1},
		{"melanie", 0, 1},
		{"dr. jane", 1, 1}, // a title is not a first name
	} {
		if got := Factor(names, tc.speaker, tc.boost); got != tc.want {
			t.Errorf("Factor(%q, %v) = %v, want %v", tc.speaker, tc.boost, got, tc.want)
		}
	}
	if got := Factor(nil, "melanie", 1); got != 1 {
		t.Errorf("no names: %v, want 1", got)
	}
}
