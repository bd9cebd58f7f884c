package learn

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/extract"
	"github.com/snowclaw/snowclaw/agent/memory"
)

// Weekly summaries (docs/agent.md#consolidation-dreaming): the conversation of a group, or
// of a person with the agent in private, becomes one memory per week in
// the tier of that conversation, on two triggers:
//   - age: weeks that ended more than Options.SummaryAfter ago;
//   - size: when what is not summarized yet of one conversation passes
//     Options.SummaryTokens (150,000 by default), its oldest
//     Options.SummaryShare (70%) is summarized at once, whatever its age;
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

func (c conversation) key() string { return convKey(c.group, c.person) }

// convWeek is one week, or the first part of one, of a conversation.
type convWeek struct {
	group, person string // one of them
	extract.Week
}

// summarize writes the summaries that are due and trims the buffers.
func (l *Learning) summarize(ctx context.Context) (int, string) {
	o := l.o
	// only whole weeks by age: those that end before the cutoff
	ageCut := extract.WeekStart(l.env.Now().Add(-o.SummaryAfter)).Unix()
	covered := l.summarized()
	convs := l.groupConversations(ctx, covered)
	convs = append(convs, l.privateConversations(ctx, covered)...)
	var due []convWeek
	cuts := map[string]int64{}
	for _, c := range convs {
		cut := ageCut
		if l.conversationTokens(c.msgs) > o.SummaryTokens {
			cut = max(cut, extract.ShareCut(c.msgs, o.SummaryShare, l.conversationTokens))
		}
		cuts[c.key()] = cut
		for _, w := range extract.SplitWeeks(c.msgs, cut) {
			due = append(due, convWeek{group: c.group, person: c.person, Week: w})
		}
	}
	slices.SortFunc(due, func(x, y convWeek) int {
		return cmp.Or(strings.Compare(x.Week.Week, y.Week.Week), cmp.Compare(x.Until, y.Until), strings.Compare(x.group+x.person, y.group+y.person))
	})
	written := map[string]int64{}
	n := 0
	note := ""
	for _, w := range due {
		if n >= maxSummariesPerRun {
			note = "more summaries are due; they are written on the next run"
			break
		}
		text, err := l.model.Summarize(ctx, l.weekWhere(w), w.Msgs)
		if err != nil {
			note = "summaries stopped: " + err.Error()
			break
		}
		it := memory.Item{
			Text:   l.env.Sanitize(fmt.Sprintf("Week %s: %s", w.Week.Week, text)),
			Source: memory.SourceAgent, Topic: summaryTopic(w), Confidence: 0.6,
			Context: fmt.Sprintf("weekly summary of %d messages", len(w.Msgs)),
		}
		if w.group != "" {
			it.Tier, it.Group = snowclaw.TierGroup, w.group
		} else {
			it.Tier, it.Subject = snowclaw.TierPrivate, w.person
		}
		if _, fresh := l.mem.Remember(it); fresh {
			n++
		}
		k := w.key()
		written[k] = max(written[k], w.Until)
	}
	// what is summarized, or old enough, leaves the prompt's history
	l.host.TrimHistory(func(group, person string) int64 {
		k := convKey(group, person)
		drop := ageCut
		if cuts[k] > ageCut {
			drop = max(drop, min(cuts[k], written[k]))
		}
		return drop
	})
	return n, note
}

func (w convWeek) key() string { return conversation{group: w.group, person: w.person}.key() }

// conversationTokens counts a stretch of conversation as a prompt would.
func (l *Learning) conversationTokens(msgs []extract.Message) int {
	n := 0
	for _, m := range msgs {
		n += l.env.Tokens.Count(m.Sender + ": " + m.Text)
	}
	return n
}

// summaryTopic is where a stretch's summary lives: its conversation, its
// week, and for the part of a week the size trigger cut short, where the
// part ends (…/summary/2026-W47-until-1795000000).
func summaryTopic(w convWeek) string {
	base := "group/" + w.group
	if w.group == "" {
		base = "user/" + snowclaw.NpubOf(w.person)
	}
	wk := w.Week.Week
	if !w.Whole() {
		wk += "-until-" + strconv.FormatInt(w.Until, 10)
	}
	return base + "/summary/" + wk
}

// summarized is, per conversation (conversation.key), the time up to
// which the agent's summaries cover it, read from their topics.
func (l *Learning) summarized() map[string]int64 {
	out := map[string]int64{}
	for _, it := range l.mem.Items() {
		base, rest, ok := strings.Cut(it.Topic, "/summary/")
		if !ok || it.Source != memory.SourceAgent || it.Tier == snowclaw.TierInternal {
			continue
		}
		rest, _, _ = strings.Cut(rest, "/") // the item id follows
		week, until, part := strings.Cut(rest, "-until-")
		end := extract.ISOWeekEnd(week)
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
			key = convKey("", it.Subject)
		default:
			continue
		}
		out[key] = max(out[key], end)
	}
	return out
}

// lastSummary is the newest of the agent's weekly summaries among items,
// told apart by their topics as summarized() does.
func lastSummary(items []memory.Item) *SummaryNote {
	var last *memory.Item
	for i, it := range items {
		if it.Source != memory.SourceAgent || it.Tier == snowclaw.TierInternal || !strings.Contains(it.Topic, "/summary/") {
			continue
		}
		if last == nil || it.CreatedAt > last.CreatedAt || (it.CreatedAt == last.CreatedAt && it.Topic > last.Topic) {
			last = &items[i]
		}
	}
	if last == nil {
		return nil
	}
	n := &SummaryNote{ID: last.ID, Topic: last.Topic, Tier: last.Tier, Group: last.Group, Text: last.Text, CreatedAt: last.CreatedAt}
	if last.Tier == snowclaw.TierPrivate && last.Subject != "" {
		n.Person = snowclaw.NpubOf(last.Subject)
	}
	return n
}

func (l *Learning) weekWhere(w convWeek) string {
	t := Conversation{Group: w.group, Private: w.group == "", Sender: w.person}
	return fmt.Sprintf("%s, week %s", l.where(t), w.Week.Week)
}

// groupConversations reads each group's messages the summaries do not
// cover yet from the store; frozen people's messages are left out.
func (l *Learning) groupConversations(ctx context.Context, covered map[string]int64) []conversation {
	var out []conversation
	for _, g := range l.mem.Groups() {
		c := conversation{group: g.ID}
		since := nostr.Timestamp(covered[g.ID])
		_ = l.env.Query(ctx, nostr.Filter{Kinds: []int{1, 9, 10, 11, 12, 1111}, Tags: nostr.TagMap{"h": {g.ID}}, Since: &since}, func(evt *nostr.Event) bool {
			if evt.PubKey == l.env.Pubkey || l.mem.Frozen(evt.PubKey) || int64(evt.CreatedAt) < covered[g.ID] {
				return true
			}
			n, _ := l.mem.Npub(evt.PubKey)
			c.msgs = append(c.msgs, extract.Message{Sender: n.Name(), Pubkey: evt.PubKey, At: int64(evt.CreatedAt), Text: l.env.Sanitize(evt.Content)})
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
func (l *Learning) privateConversations(ctx context.Context, covered map[string]int64) []conversation {
	by := map[string]*conversation{}
	var wraps []*nostr.Event
	_ = l.env.Query(ctx, nostr.Filter{Kinds: []int{snowclaw.KindGiftWrap}, Tags: nostr.TagMap{"p": {l.env.Pubkey}}}, func(evt *nostr.Event) bool {
		wraps = append(wraps, evt)
		return len(wraps) < 5000
	})
	for _, w := range wraps {
		pm, err := l.host.OpenPrivate(ctx, w)
		if err != nil || pm.From == l.env.Pubkey || l.mem.Frozen(pm.From) || int64(pm.CreatedAt) < covered[convKey("", pm.From)] {
			continue
		}
		n, _ := l.mem.Npub(pm.From)
		if by[pm.From] == nil {
			by[pm.From] = &conversation{person: pm.From}
		}
		by[pm.From].msgs = append(by[pm.From].msgs, extract.Message{Sender: n.Name(), Pubkey: pm.From, At: int64(pm.CreatedAt), Text: l.env.Sanitize(pm.Content)})
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
