package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/extract"
	"github.com/snowclaw/snowclaw/agent/memory"
	"github.com/snowclaw/snowclaw/agent/privmsg"
)

// Weekly summaries (seed 004 compaction): the conversation of a group, or
// of a person with the agent in private, in weeks that ended more than
// Learning.SummaryAfter ago, becomes one memory per week in the tier of
// that conversation. The messages stay on the relay as they were; the
// buffered ones that old leave the prompt's history.

// maxSummariesPerRun bounds one run's model calls; the rest wait for the
// next run.
const maxSummariesPerRun = 8

// convWeek is one week of one conversation.
type convWeek struct {
	group, person string // one of them
	week          string // ISO week, 2026-W47
	msgs          []extract.Message
}

// summarize writes the summaries that are due and trims the buffers.
func (a *Agent) summarize(ctx context.Context) (int, string) {
	cutoff := a.o.Now().Add(-a.o.Learning.SummaryAfter)
	// only whole weeks: one that ends before the cutoff
	until := weekStart(cutoff)
	var weeks []convWeek
	for _, g := range a.mem.Groups() {
		weeks = append(weeks, a.groupWeeks(ctx, g.ID, until)...)
	}
	weeks = append(weeks, a.privateWeeks(ctx, until)...)
	done := a.summaryTopics()
	n := 0
	note := ""
	for _, w := range weeks {
		if done[summaryTopic(w)] || len(w.msgs) == 0 {
			continue
		}
		if n >= maxSummariesPerRun {
			note = "more summaries are due; they are written on the next run"
			break
		}
		text, err := a.learner.Summarize(ctx, a.weekWhere(w), w.msgs)
		if err != nil {
			note = "summaries stopped: " + err.Error()
			break
		}
		it := memory.Item{
			Text:   a.keys.Sanitize(fmt.Sprintf("Week %s: %s", w.week, text)).Text,
			Source: memory.SourceAgent, Topic: summaryTopic(w), Confidence: 0.6,
			Context: fmt.Sprintf("weekly summary of %d messages", len(w.msgs)),
		}
		if w.group != "" {
			it.Tier, it.Group = snowclaw.TierGroup, w.group
		} else {
			it.Tier, it.Subject = snowclaw.TierPrivate, w.person
		}
		if _, fresh := a.mem.Remember(it); fresh {
			n++
		}
	}
	for _, r := range a.allRings() {
		r.DropBefore(until.Unix())
	}
	return n, note
}

// summaryTopic is where a week's summary lives; its d tag says which
// conversation and week it covers, so a week is summarized once.
func summaryTopic(w convWeek) string {
	if w.group != "" {
		return "group/" + w.group + "/summary/" + w.week
	}
	return "user/" + snowclaw.NpubOf(w.person) + "/summary/" + w.week
}

// summaryTopics are the topics of the summaries already written.
func (a *Agent) summaryTopics() map[string]bool {
	out := map[string]bool{}
	for _, it := range a.mem.Items() {
		if i := strings.LastIndex(it.Topic, "/"); i > 0 && strings.Contains(it.Topic, "/summary/") {
			out[it.Topic[:i]] = true
		}
	}
	return out
}

func (a *Agent) weekWhere(w convWeek) string {
	t := turn{group: w.group, private: w.group == "", sender: w.person}
	return fmt.Sprintf("%s, week %s", a.where(t), w.week)
}

// weekStart is the Monday 00:00 UTC of t's week.
func weekStart(t time.Time) time.Time {
	t = t.UTC()
	d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
}

func isoWeek(at int64) string {
	y, w := time.Unix(at, 0).UTC().ISOWeek()
	return fmt.Sprintf("%d-W%02d", y, w)
}

// groupWeeks reads a group's messages written before until from the store,
// by week; frozen people's messages are left out.
func (a *Agent) groupWeeks(ctx context.Context, group string, until time.Time) []convWeek {
	u := nostr.Timestamp(until.Unix())
	by := map[string]*convWeek{}
	_ = a.o.Query(ctx, nostr.Filter{Kinds: []int{1, 9, 10, 11, 12, 1111}, Tags: nostr.TagMap{"h": {group}}, Until: &u}, func(evt *nostr.Event) bool {
		if evt.PubKey == a.pk || a.frozen(evt.PubKey) || int64(evt.CreatedAt) >= until.Unix() {
			return true
		}
		n, _ := a.mem.Npub(evt.PubKey)
		wk := isoWeek(int64(evt.CreatedAt))
		if by[wk] == nil {
			by[wk] = &convWeek{group: group, week: wk}
		}
		by[wk].msgs = append(by[wk].msgs, extract.Message{Sender: n.Name(), Pubkey: evt.PubKey, At: int64(evt.CreatedAt), Text: a.keys.Sanitize(evt.Content).Text})
		return true
	})
	return sortedWeeks(by)
}

// privateWeeks opens the private messages people sent the agent before
// until (their gift wraps are addressed to it), by person and week.
func (a *Agent) privateWeeks(ctx context.Context, until time.Time) []convWeek {
	by := map[string]*convWeek{}
	var wraps []*nostr.Event
	_ = a.o.Query(ctx, nostr.Filter{Kinds: []int{snowclaw.KindGiftWrap}, Tags: nostr.TagMap{"p": {a.pk}}}, func(evt *nostr.Event) bool {
		wraps = append(wraps, evt)
		return len(wraps) < 5000
	})
	for _, w := range wraps {
		pm, err := privmsg.Unwrap(ctx, w, a.sk)
		if err != nil || pm.From == a.pk || a.frozen(pm.From) || int64(pm.CreatedAt) >= until.Unix() {
			continue
		}
		n, _ := a.mem.Npub(pm.From)
		wk := isoWeek(int64(pm.CreatedAt))
		k := pm.From + "|" + wk
		if by[k] == nil {
			by[k] = &convWeek{person: pm.From, week: wk}
		}
		by[k].msgs = append(by[k].msgs, extract.Message{Sender: n.Name(), Pubkey: pm.From, At: int64(pm.CreatedAt), Text: a.keys.Sanitize(pm.Content).Text})
	}
	return sortedWeeks(by)
}

func sortedWeeks(by map[string]*convWeek) []convWeek {
	out := make([]convWeek, 0, len(by))
	for _, w := range by {
		slices.SortFunc(w.msgs, func(x, y extract.Message) int { return int(x.At - y.At) })
		out = append(out, *w)
	}
	slices.SortFunc(out, func(x, y convWeek) int {
		return strings.Compare(x.week+x.group+x.person, y.week+y.group+y.person)
	})
	return out
}
