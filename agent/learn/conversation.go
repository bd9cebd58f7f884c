package learn

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/extract"
	"github.com/snowclaw/snowclaw/agent/memory"
)

// Learning from conversation: a quiet conversation's new messages go to
// the model in one call; each candidate meets the similar memories of its
// scope and is added, versioned or dropped, in its conversation's tier.

// loop reads ready batches one at a time, so learning never takes
// more than one model call at once.
func (l *Learning) loop(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-l.q.signal:
		}
		for b := l.q.next(); b != nil; b = l.q.next() {
			l.learnBatch(b)
			l.q.done(b)
			select {
			case <-stop:
				return
			default:
			}
		}
	}
}

// learnBatch learns from one conversation's batch.
func (l *Learning) learnBatch(b *batch) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*l.env.ReplyTimeout)
	defer cancel()
	t := Conversation{Group: b.group, Private: b.group == "", Sender: b.person}
	var msgs []extract.Message
	var from []memory.HistoryMessage
	for _, m := range b.msgs {
		// a frozen person's words are not even read: nothing about them
		// may be written, and what they said is what would be
		if l.mem.Frozen(m.Pubkey) {
			l.st.frozenSkipped.Add(1)
			continue
		}
		msgs = append(msgs, extract.Message{Sender: m.Sender, Pubkey: m.Pubkey, At: m.Timestamp, Text: m.Content})
		from = append(from, m)
	}
	if len(msgs) == 0 {
		return
	}
	cands, err := l.model.Extract(ctx, l.where(t), msgs)
	if err != nil {
		l.learnFailed("extract", err)
		return
	}
	var items []memory.Item
	var sources []memory.HistoryMessage
	var kept []extract.Candidate
	var similar [][]extract.Existing
	foreign := map[string]Recalled{} // other authors' memories shown to the model, by the id it saw
	for _, c := range cands {
		it, ok := l.candidateItem(c, t, from[c.Message])
		if !ok {
			continue
		}
		items, sources, kept = append(items, it), append(sources, from[c.Message]), append(kept, c)
		// in a group, search as the message's author: a member, who
		// reads what the group's readers read
		ts := t
		if !t.Private {
			ts.Sender = from[c.Message].Pubkey
		}
		similar = append(similar, l.similar(ctx, it, ts, foreign))
	}
	if len(items) == 0 {
		return
	}
	picked := make([]extract.Candidate, len(items))
	for i, it := range items {
		picked[i] = extract.Candidate{Text: it.Text}
	}
	decisions, err := l.model.Decide(ctx, picked, similar)
	if err != nil {
		l.learnFailed("decide", err)
		return
	}
	for i, it := range items {
		// the model took its time: what was deleted, erased or frozen
		// meanwhile is not written
		if !l.q.wanted(sources[i].EventID) || l.mem.Frozen(it.Author) || it.Subject != "" && l.mem.Frozen(it.Subject) {
			l.st.ignored.Add(1)
			continue
		}
		l.noteGroup(kept[i], it, t)
		if ok, replaced := l.applyLearnt(ctx, it, decisions[i], t, foreign); ok {
			l.notePerson(kept[i], it, t, replaced)
		}
	}
	if err := l.host.Flush(ctx); err != nil {
		l.log.Error("learnt memories not written yet; will retry", "err", err)
	}
}

func (l *Learning) learnFailed(what string, err error) {
	l.st.dropped.Add(1)
	if errors.Is(err, extract.ErrBudget) {
		return // counted and logged by the learner
	}
	l.log.Warn("learning from conversation failed: batch dropped", "step", what, "err", err)
}

// where names the conversation for the model.
func (l *Learning) where(t Conversation) string {
	if t.Private {
		n, _ := l.mem.Npub(t.Sender)
		return fmt.Sprintf("a private conversation between you and %s", n.Name())
	}
	g, _ := l.mem.Group(t.Group)
	if g.Name != "" {
		return fmt.Sprintf("the group %q", g.Name)
	}
	return "a group"
}

// candidateItem places a candidate: the tier and scope of the
// conversation, never wider, and the person it is about when that person
// is not frozen. The text is sanitized again: it is the model's writing.
func (l *Learning) candidateItem(c extract.Candidate, t Conversation, m memory.HistoryMessage) (memory.Item, bool) {
	it := memory.Item{
		Text: l.env.Sanitize(c.Text), Source: memory.SourceAgent, Author: m.Pubkey,
		Confidence: c.Confidence, CreatedAt: m.Timestamp,
		Context: fmt.Sprintf("learnt from conversation: %s, message %s (%s)", c.Kind, m.EventID, time.Unix(m.Timestamp, 0).UTC().Format(time.DateOnly)),
	}
	if len(c.Topics) > 0 {
		it.Context += "; topics: " + strings.Join(c.Topics, ", ")
	}
	if t.Private {
		it.Tier, it.Subject = snowclaw.TierPrivate, t.Sender
	} else {
		it.Tier, it.Group, it.Subject = snowclaw.TierGroup, t.Group, c.About
	}
	if it.Subject != "" && l.mem.Frozen(it.Subject) {
		l.st.frozenSkipped.Add(1)
		return memory.Item{}, false
	}
	if c.Confidence <= 0 {
		it.Confidence = 0.5
	}
	return it, true
}

// similar finds the memories of the item's scope most like it, as the
// conversation it came from may see them: through the search index, then
// the agent's own lexical recall (an item not indexed yet, or worded so
// the index misses it). Other authors' memories are shown under the first
// 12 hex digits of their event id and noted in foreign: a contradiction
// of one stands beside it (contradict) rather than being dropped. Another
// relay's (layered recall) are left out: learning writes beside, or
// versions, only what is stored here.
func (l *Learning) similar(ctx context.Context, it memory.Item, t Conversation, foreign map[string]Recalled) []extract.Existing {
	const n = 5
	var out []extract.Existing
	seen := map[string]bool{}
	add := func(x memory.Item) {
		if !seen[x.ID] && len(out) < n {
			seen[x.ID] = true
			out = append(out, extract.Existing{ID: x.ID, Text: x.Text, At: x.UpdatedAt})
		}
	}
	for _, r := range l.host.Recall(ctx, t, it.Text, n) {
		if r.Origin != "" && r.Origin != snowclaw.OriginLocal {
			continue
		}
		if r.Author != "" && r.Author != l.env.Pubkey {
			x := r.Item
			x.ID = r.Event[:12]
			foreign[x.ID] = r
			add(x)
			continue
		}
		add(r.Item)
	}
	for _, x := range l.mem.Recall(it.Text, func(x memory.Item) bool { return l.host.MayRead(x, t) }, n) {
		add(x)
	}
	return out
}

// applyLearnt writes one decision: a new memory, a new version of an old
// one (one path for every new version: Supersede), or nothing. It reports
// whether something was written and, for a new version, the old text.
func (l *Learning) applyLearnt(ctx context.Context, it memory.Item, d extract.Decision, t Conversation, foreign map[string]Recalled) (bool, string) {
	switch d.Action {
	case extract.ActionNothing:
		l.st.ignored.Add(1)
	case extract.ActionUpdate:
		if f, ok := foreign[d.Target]; ok {
			return l.contradict(ctx, it, f, t), ""
		}
		old, ok := l.mem.Item(d.Target)
		if !ok || !l.host.InScope(old, t) {
			l.st.ignored.Add(1)
			return false, ""
		}
		evt, err := l.host.CurrentEvent(ctx, old)
		if err == nil {
			it.Topic = ""
			_, _, err = l.host.Supersede(ctx, old.ID, evt, it)
		}
		if err != nil {
			l.log.Warn("learnt update not written", "old", old.ID, "err", err)
			l.st.ignored.Add(1)
			return false, ""
		}
		l.st.updated.Add(1)
		return true, old.Text
	default:
		if _, fresh := l.mem.Remember(it); fresh {
			l.st.added.Add(1)
			return true, ""
		}
		l.st.ignored.Add(1)
	}
	return false, ""
}
