// Package querydate finds the months a search query names ("in July
// 2023", "on 1 February, 2023") and says whether a doc was written then,
// so the search engine can lift docs of the month a question is about.
package querydate

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Dates in a query ("what did she paint in July 2023?", "on 1 February,
// 2023") name when the thing was said; a doc's created_at is when it was
// written (a memory's, the conversation's date). A doc written in a
// month the query names, or the month after (people tell of last
// month's trip), is lifted. The words stay in the query text: the keyword
// side still matches "July" written out.

var (
	monthNames = map[string]time.Month{
		"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
		"august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
		"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
	}
	// a month name with an optional day before or after it and an
	// optional year: "May 2023", "1 February, 2023", "October 13, 2023"
	monthRe = regexp.MustCompile(`(?i)\b(?:\d{1,2}(?:st|nd|rd|th)?\s+)?(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\b\.?(?:\s+\d{1,2}(?:st|nd|rd|th)?\b)?(?:,?\s+((?:19|20)\d\d)\b)?`)
)

// Month is a month a query names; Year 0 means any year.
type Month struct {
	Month time.Month
	Year  int
}

// Months finds the months s names. "may" alone is a verb as often as
// a month, so it counts only with a day or a year beside it.
func Months(s string) []Month {
	var out []Month
	for _, m := range monthRe.FindAllStringSubmatch(s, -1) {
		name := strings.ToLower(m[1])
		if name == "may" && strings.EqualFold(strings.TrimSpace(m[0]), "may") {
			continue
		}
		sp := Month{Month: monthNames[name]}
		if m[2] != "" {
			sp.Year, _ = strconv.Atoi(m[2])
		}
		out = append(out, sp)
	}
	return out
}

// Factor is 1+boost when createdAt (unix seconds) falls in a month of
// spans or the month after it, else 1.
func Factor(spans []Month, createdAt int64, boost float64) float64 {
	if len(spans) == 0 || boost == 0 || createdAt <= 0 {
		return 1
	}
	t := time.Unix(createdAt, 0).UTC()
	for _, sp := range spans {
		for _, lag := range []int{0, 1} {
			at := t.AddDate(0, -lag, 0)
			if at.Month() == sp.Month && (sp.Year == 0 || at.Year() == sp.Year) {
				return 1 + boost
			}
		}
	}
	return 1
}
