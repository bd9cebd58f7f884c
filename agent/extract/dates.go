package extract

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Relative dates are resolved here, in Go, against the time the message was
// written, rather than trusted to the model: a small model miscounts
// weekdays, and "tomorrow" stored as such is wrong the day after.
//
// Conventions: "Friday", "this Friday", "on Friday", "coming Friday" and
// "next Friday" are the first Friday after the message's day; "last Friday"
// the last one before it. Weeks start on Monday. Dates are days in UTC.

var weekdays = map[string]time.Weekday{
	"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
}

var numbers = map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}

const wd = `monday|tuesday|wednesday|thursday|friday|saturday|sunday`

// relativeRE finds the relative date phrases Absolutize resolves, with an
// optional leading "on" so that "on Friday" does not become "on on …".
var relativeRE = regexp.MustCompile(`(?i)\b(?:on\s+)?(?:` +
	`the\s+day\s+after\s+tomorrow|the\s+day\s+before\s+yesterday|today|tonight|this\s+(?:morning|afternoon|evening)|yesterday|tomorrow` +
	`|(?:next|this|last|coming)\s+(?:` + wd + `)|(?:` + wd + `)` +
	`|(?:next|last|this)\s+(?:week|month|year)` +
	`|in\s+(?:\d{1,3}|an?|one|two|three|four|five|six|seven)\s+(?:days?|weeks?)` +
	`|(?:\d{1,3}|an?|one|two|three|four|five|six|seven)\s+(?:days?|weeks?)\s+ago` +
	`)\b`)

// Absolutize replaces every relative date phrase in text with the absolute
// date it means for a message written at at: "next Friday" becomes
// "on 2026-11-27", "next week" "in the week of 2026-11-30", "next month"
// "in 2026-12". It returns the new text and the first date found
// (YYYY-MM-DD, or "" when there was none).
func Absolutize(text string, at time.Time) (string, string) {
	day := time.Date(at.UTC().Year(), at.UTC().Month(), at.UTC().Day(), 0, 0, 0, 0, time.UTC)
	first := ""
	out := relativeRE.ReplaceAllStringFunc(text, func(m string) string {
		abs, date, ok := resolve(m, day)
		if !ok {
			return m
		}
		if first == "" {
			first = date
		}
		return abs
	})
	return out, first
}

// resolve turns one phrase into its absolute wording and its date.
func resolve(phrase string, day time.Time) (string, string, bool) {
	p := strings.Join(strings.Fields(strings.ToLower(phrase)), " ")
	p = strings.TrimPrefix(p, "on ")
	on := func(t time.Time) (string, string, bool) {
		d := t.Format(time.DateOnly)
		return "on " + d, d, true
	}
	switch p {
	case "today", "tonight", "this morning", "this afternoon", "this evening":
		return on(day)
	case "yesterday":
		return on(day.AddDate(0, 0, -1))
	case "tomorrow":
		return on(day.AddDate(0, 0, 1))
	case "the day after tomorrow":
		return on(day.AddDate(0, 0, 2))
	case "the day before yesterday":
		return on(day.AddDate(0, 0, -2))
	case "this week", "next week", "last week":
		monday := day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
		switch p {
		case "next week":
			monday = monday.AddDate(0, 0, 7)
		case "last week":
			monday = monday.AddDate(0, 0, -7)
		}
		d := monday.Format(time.DateOnly)
		return "in the week of " + d, d, true
	case "this month", "next month", "last month":
		m := time.Date(day.Year(), day.Month(), 1, 0, 0, 0, 0, time.UTC)
		switch p {
		case "next month":
			m = m.AddDate(0, 1, 0)
		case "last month":
			m = m.AddDate(0, -1, 0)
		}
		return "in " + m.Format("2006-01"), m.Format(time.DateOnly), true
	case "this year", "next year", "last year":
		y := day.Year()
		switch p {
		case "next year":
			y++
		case "last year":
			y--
		}
		return fmt.Sprintf("in %d", y), fmt.Sprintf("%d-01-01", y), true
	}
	words := strings.Fields(p)
	if w, ok := weekdays[words[len(words)-1]]; ok && len(words) <= 2 {
		if len(words) == 2 && words[0] == "last" {
			back := (int(day.Weekday()) - int(w) + 7) % 7
			if back == 0 {
				back = 7
			}
			return on(day.AddDate(0, 0, -back))
		}
		ahead := (int(w) - int(day.Weekday()) + 7) % 7
		if ahead == 0 {
			ahead = 7
		}
		return on(day.AddDate(0, 0, ahead))
	}
	// "in N days/weeks", "N days/weeks ago"
	ago := words[len(words)-1] == "ago"
	if ago {
		words = words[:len(words)-1]
	}
	if len(words) >= 2 && words[0] == "in" {
		words = words[1:]
	}
	if len(words) != 2 {
		return "", "", false
	}
	n, err := strconv.Atoi(words[0])
	if err != nil {
		n = numbers[words[0]]
	}
	if n <= 0 {
		return "", "", false
	}
	if strings.HasPrefix(words[1], "week") {
		n *= 7
	}
	if ago {
		n = -n
	}
	return on(day.AddDate(0, 0, n))
}

// ValidDate returns d when it is a calendar date YYYY-MM-DD within a
// century of at, else "": a model's own date is kept only when it is one.
func ValidDate(d string, at time.Time) string {
	t, err := time.Parse(time.DateOnly, strings.TrimSpace(d))
	if err != nil || t.Year() < at.Year()-100 || t.Year() > at.Year()+100 {
		return ""
	}
	return t.Format(time.DateOnly)
}
