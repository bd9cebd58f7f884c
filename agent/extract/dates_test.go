package extract

import (
	"testing"
	"time"
)

func TestAbsolutize(t *testing.T) {
	// Tuesday 2026-11-24, late evening UTC
	at := time.Date(2026, 11, 24, 22, 30, 0, 0, time.UTC)
	tests := []struct {
		in, want, date string
	}{
		{"alice has the dentist next Friday", "alice has the dentist on 2026-11-27", "2026-11-27"},
		{"the launch is on Friday", "the launch is on 2026-11-27", "2026-11-27"},
		{"bob arrives tomorrow", "bob arrives on 2026-11-25", "2026-11-25"},
		{"it rained yesterday", "it rained on 2026-11-23", "2026-11-23"},
		{"we met last Tuesday", "we met on 2026-11-17", "2026-11-17"},
		{"see you Tuesday", "see you on 2026-12-01", "2026-12-01"},
		{"review in 3 days", "review on 2026-11-27", "2026-11-27"},
		{"shipped two weeks ago", "shipped on 2026-11-10", "2026-11-10"},
		{"sprint starts next week", "sprint starts in the week of 2026-11-30", "2026-11-30"},
		{"moved to Berlin last month", "moved to Berlin in 2026-10", "2026-10-01"},
		{"the day after tomorrow is the demo", "on 2026-11-26 is the demo", "2026-11-26"},
		{"alice likes Fridays and tea", "alice likes Fridays and tea", ""},
		{"no dates here", "no dates here", ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, date := Absolutize(tc.in, at)
			if got != tc.want || date != tc.date {
				t.Errorf("Absolutize(%q) = %q, %q; want %q, %q", tc.in, got, date, tc.want, tc.date)
			}
		})
	}
}

func TestValidDate(t *testing.T) {
	at := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	for in, want := range map[string]string{
		"2026-11-27": "2026-11-27", " 2027-01-02 ": "2027-01-02", "2026-02-30": "", "next friday": "", "1066-10-14": "", "": "",
	} {
		if got := ValidDate(in, at); got != want {
			t.Errorf("ValidDate(%q) = %q, want %q", in, got, want)
		}
	}
}
