package extract

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Weeks cut a conversation into the stretches weekly summaries cover
// (docs/agent.md#consolidation-dreaming): ISO weeks in UTC, and for the size trigger the
// time before which the oldest share of a conversation lies.

// Week is one ISO week of a conversation, or the first part of one.
type Week struct {
	Week  string // ISO week, 2026-W47
	Until int64  // the stretch ends here (unix): the week's end for a whole week
	Msgs  []Message
}

// Whole reports whether the stretch is its whole week.
func (w Week) Whole() bool { return w.Until == ISOWeekEnd(w.Week) }

// WeekStart is the Monday 00:00 UTC of t's week.
func WeekStart(t time.Time) time.Time {
	t = t.UTC()
	d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
}

// ISOWeek names the ISO week of a unix time, 2026-W47.
func ISOWeek(at int64) string {
	y, w := time.Unix(at, 0).UTC().ISOWeek()
	return fmt.Sprintf("%d-W%02d", y, w)
}

// ISOWeekEnd is the end (next Monday 00:00 UTC, unix) of an ISO week
// written as ISOWeek does; 0 for anything else.
func ISOWeekEnd(week string) int64 {
	var y, w int
	if n, err := fmt.Sscanf(week, "%d-W%d", &y, &w); n != 2 || err != nil || w < 1 || w > 53 {
		return 0
	}
	// January 4th is always in week 1
	return WeekStart(time.Date(y, 1, 4, 0, 0, 0, 0, time.UTC)).AddDate(0, 0, 7*w).Unix()
}

// ShareCut is the time before which the oldest share of msgs' tokens
// (as count counts them) lie; msgs are oldest first.
func ShareCut(msgs []Message, share float64, count func([]Message) int) int64 {
	want := int(math.Ceil(share * float64(count(msgs))))
	sum := 0
	for i, m := range msgs {
		if sum += count(msgs[i : i+1]); sum >= want {
			if i+1 < len(msgs) {
				return msgs[i+1].At
			}
			return m.At + 1
		}
	}
	return 0
}

// SplitWeeks cuts what of msgs was written before cut into weeks, oldest
// first; the last one ends at cut when cut falls inside it.
func SplitWeeks(msgs []Message, cut int64) []Week {
	by := map[string]*Week{}
	for _, m := range msgs {
		if m.At >= cut {
			continue
		}
		wk := ISOWeek(m.At)
		if by[wk] == nil {
			start := WeekStart(time.Unix(m.At, 0))
			by[wk] = &Week{Week: wk, Until: min(start.AddDate(0, 0, 7).Unix(), cut)}
		}
		by[wk].Msgs = append(by[wk].Msgs, m)
	}
	out := make([]Week, 0, len(by))
	for _, w := range by {
		out = append(out, *w)
	}
	slices.SortFunc(out, func(x, y Week) int { return strings.Compare(x.Week, y.Week) })
	return out
}
