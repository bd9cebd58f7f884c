package agent

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/extract"
	"github.com/snowclaw/snowclaw/agent/memory"
	"github.com/snowclaw/snowclaw/agent/privmsg"
)

// Weekly summaries (seed 004 compaction): the conversation of a group, or
// of a person with the agent in private, becomes one memory per week in
// the tier of that conversation, on two triggers:
//   - age: weeks that ended more than Learning.SummaryAfter ago;
//   - size: when what is not summarized yet of one conversation passes
//     Learning.SummaryTokens (seed 004: 150,000), its oldest
//     Learning.SummaryShare (70%) is summarized at once, whatever its age;
//     a week cut short this way gets a summary of its part, and the rest of
//     it a summary of its own later.
//
// Each summary's topic says which conversation and stretch it covers, so
// nothing is summarized twice. The messages stay on the relay as they
// were; the buffered ones summarized leave the prompt's history.

// maxSummariesPerRun bounds one run's model calls; the rest wait for the
// next run.
const maxSummariesPerRun = 8

// conversation is what is not summarized yet of one conversation.
type conversation struct {
	group, person string // one of them
	msgs          []extract.Message
}

func (c conversation) key() string {
	if c.group != "" {
		return c.group
	}
	return dmKey(c.person)
}

// convWeek is one week, or the first part of one, of a conversation.
type convWeek struct {
	group, person string // one of them
	week          string // ISO week, 2026-W47
	until         int64  // the part ends here (unix); the week's end for a whole week
	msgs          []extract.Message
}

// summarize writes the summaries that are due and trims the buffers.
func (a *Agent) summarize(ctx context.Context) (int, string) {
	l := a.o.Learning
	// only whole weeks by age: those that end before the cutoff
	ageCut := weekStart(a.o.Now().Add(-l.SummaryAfter)).Unix()
	covered := a.summarized()
	convs := a.groupConversations(ctx, covered)
	convs = append(convs, a.privateConversations(ctx, covered)...)
	var due []convWeek
	cuts := map[string]int64{}
	for _, c := range convs {
		cut := ageCut
		if a.conversationTokens(c.msgs) > l.SummaryTokens {
			cut = max(cut, shareCut(c.msgs, l.SummaryShare, a.conversationTokens))
		}
		cuts[c.key()] = cut
		due = append(due, splitWeeks(c, cut)...)
	}
	slices.SortFunc(due, func(x, y convWeek) int {
		return cmp.Or(strings.Compare(x.week, y.week), cmp.Compare(x.until, y.until), strings.Compare(x.group+x.person, y.group+y.person))
	})
	written := map[string]int64{}
	n := 0
	note := ""
	for _, w := range due {
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
		k := w.key()
		written[k] = max(written[k], w.until)
	}
	// what is summarized, or old enough, leaves the prompt's history
	a.mu.Lock()
	for k, r := range a.rings {
		drop := ageCut
		if cuts[k] > ageCut {
			drop = max(drop, min(cuts[k], written[k]))
		}
		r.DropBefore(drop)
	}
	a.mu.Unlock()
	return n, note
}

func (w convWeek) key() string { return conversation{group: w.group, person: w.person}.key() }

// conversationTokens counts a stretch of conversation as a prompt would.
func (a *Agent) conversationTokens(msgs []extract.Message) int {
	n := 0
	for _, m := range msgs {
		n += a.tok.Count(m.Sender + ": " + m.Text)
	}
	return n
}

// shareCut is the time before which the oldest share of msgs' tokens lie.
func shareCut(msgs []extract.Message, share float64, count func([]extract.Message) int) int64 {
	total := count(msgs)
	want := int(math.Ceil(share * float64(total)))
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

// splitWeeks cuts what of c was written before cut into weeks; the last
// one ends at cut when cut falls inside it.
func splitWeeks(c conversation, cut int64) []convWeek {
	by := map[string]*convWeek{}
	for _, m := range c.msgs {
		if m.At >= cut {
			continue
		}
		wk := isoWeek(m.At)
		if by[wk] == nil {
			start := weekStart(time.Unix(m.At, 0))
			by[wk] = &convWeek{group: c.group, person: c.person, week: wk, until: min(start.AddDate(0, 0, 7).Unix(), cut)}
		}
		by[wk].msgs = append(by[wk].msgs, m)
	}
	out := make([]convWeek, 0, len(by))
	for _, w := range by {
		out = append(out, *w)
	}
	return out
}

// summaryTopic is where a stretch's summary lives: its conversation, its
// week, and for the part of a week the size trigger cut short, where the
// part ends (…/summary/2026-W47-until-1795000000).
func summaryTopic(w convWeek) string {
	base := "group/" + w.group
	if w.group == "" {
		base = "user/" + snowclaw.NpubOf(w.person)
	}
	wk := w.week
	if w.until != isoWeekEnd(w.week) {
		wk += "-until-" + strconv.FormatInt(w.until, 10)
	}
	return base + "/summary/" + wk
}

// summarized is, per conversation (conversation.key), the time up to
// which the agent's summaries cover it, read from their topics.
func (a *Agent) summarized() map[string]int64 {
	out := map[string]int64{}
	for _, it := range a.mem.Items() {
		base, rest, ok := strings.Cut(it.Topic, "/summary/")
		if !ok || it.Source != memory.SourceAgent || it.Tier == snowclaw.TierInternal {
			continue
		}
		rest, _, _ = strings.Cut(rest, "/") // the item id follows
		week, until, part := strings.Cut(rest, "-until-")
		end := isoWeekEnd(week)
		if part {
			if u, err := strconv.ParseInt(until, 10, 64); err == nil {
				end = u
			}
		}
		var key string
		switch {
		case it.Tier == snowclaw.TierGroup && base == "group/"+it.Group:
			key = it.Group
		case it.Tier == snowclaw.TierPrivate && base == "user/"+snowclaw.NpubOf(it.Subject):
			key = dmKey(it.Subject)
		default:
			continue
		}
		out[key] = max(out[key], end)
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

// isoWeekEnd is the end (next Monday 00:00 UTC, unix) of an ISO week
// written as isoWeek does; 0 for anything else.
func isoWeekEnd(week string) int64 {
	var y, w int
	if n, err := fmt.Sscanf(week, "%d-W%d", &y, &w); n != 2 || err != nil || w < 1 || w > 53 {
		return 0
	}
	// January 4th is always in week 1
	return weekStart(time.Date(y, 1, 4, 0, 0, 0, 0, time.UTC)).AddDate(0, 0, 7*w).Unix()
}

// groupConversations reads each group's messages the summaries do not
// cover yet from the store; frozen people's messages are left out.
func (a *Agent) groupConversations(ctx context.Context, covered map[string]int64) []conversation {
	var out []conversation
	for _, g := range a.mem.Groups() {
		c := conversation{group: g.ID}
		since := nostr.Timestamp(covered[g.ID])
		_ = a.o.Query(ctx, nostr.Filter{Kinds: []int{1, 9, 10, 11, 12, 1111}, Tags: nostr.TagMap{"h": {g.ID}}, Since: &since}, func(evt *nostr.Event) bool {
			if evt.PubKey == a.pk || a.frozen(evt.PubKey) || int64(evt.CreatedAt) < covered[g.ID] {
				return true
			}
			n, _ := a.mem.Npub(evt.PubKey)
			c.msgs = append(c.msgs, extract.Message{Sender: n.Name(), Pubkey: evt.PubKey, At: int64(evt.CreatedAt), Text: a.keys.Sanitize(evt.Content).Text})
			return true
		})
		if len(c.msgs) > 0 {
			out = append(out, sortedConversation(c))
		}
	}
	return out
}

// privateConversations opens the private messages people sent the agent
// that the summaries do not cover yet (their gift wraps are addressed to
// it), by person.
func (a *Agent) privateConversations(ctx context.Context, covered map[string]int64) []conversation {
	by := map[string]*conversation{}
	var wraps []*nostr.Event
	_ = a.o.Query(ctx, nostr.Filter{Kinds: []int{snowclaw.KindGiftWrap}, Tags: nostr.TagMap{"p": {a.pk}}}, func(evt *nostr.Event) bool {
		wraps = append(wraps, evt)
		return len(wraps) < 5000
	})
	for _, w := range wraps {
		pm, err := privmsg.Unwrap(ctx, w, a.sk)
		if err != nil || pm.From == a.pk || a.frozen(pm.From) || int64(pm.CreatedAt) < covered[dmKey(pm.From)] {
			continue
		}
		n, _ := a.mem.Npub(pm.From)
		if by[pm.From] == nil {
			by[pm.From] = &conversation{person: pm.From}
		}
		by[pm.From].msgs = append(by[pm.From].msgs, extract.Message{Sender: n.Name(), Pubkey: pm.From, At: int64(pm.CreatedAt), Text: a.keys.Sanitize(pm.Content).Text})
	}
	out := make([]conversation, 0, len(by))
	for _, c := range by {
		out = append(out, sortedConversation(*c))
	}
	return out
}

func sortedConversation(c conversation) conversation {
	slices.SortFunc(c.msgs, func(x, y extract.Message) int { return cmp.Compare(x.At, y.At) })
	return c
}
