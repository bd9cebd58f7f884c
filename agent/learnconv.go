package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/extract"
	"github.com/snowclaw/snowclaw/agent/llm"
	"github.com/snowclaw/snowclaw/agent/memory"
)

// Learning from conversation: a quiet conversation's new messages go to
// the model in one call; each candidate meets the similar memories of its
// scope and is added, versioned or dropped, in its conversation's tier.

// learnStats count what learning has written.
type learnStats struct {
	added, updated, ignored, frozenSkipped, dropped, compactions atomic.Uint64
}

// newLearner builds the model side of learning, or nil when learning is
// off or the model cannot answer in structured JSON.
func newLearner(o Options, sanitize func(string) string) (*extract.Learner, error) {
	if !o.Learning.Enabled || o.LLM == nil {
		return nil, nil
	}
	m, ok := o.LLM.(llm.Structured)
	if !ok {
		o.Logger.Warn("learning from conversation is off: the model does not answer structured JSON", "model", o.LLM.Name())
		return nil, nil
	}
	return extract.New(extract.Options{Model: m, CallsPerHour: o.Learning.CallsPerHour, Sanitize: sanitize, Logger: o.Logger, Now: o.Now})
}

// queueLearn offers a turn's message to learning. Messages that were
// explicit requests ("remember …", a correction) were acted on already.
func (a *Agent) queueLearn(t turn) {
	if a.learner == nil || t.note != "" || a.backlog.wasSeen(t.msg.EventID) {
		return
	}
	key, person := t.group, ""
	if t.private {
		key, person = dmKey(t.sender), t.sender
	}
	a.lq.add(key, t.group, person, t.msg, a.o.Learning)
}

// learnLoop reads ready batches one at a time, so learning never takes
// more than one model call at once.
func (a *Agent) learnLoop() {
	defer a.done.Done()
	for {
		select {
		case <-a.stop:
			return
		case <-a.lq.signal:
		}
		for b := a.lq.next(); b != nil; b = a.lq.next() {
			a.learnBatch(b)
			a.lq.done(b)
			select {
			case <-a.stop:
				return
			default:
			}
		}
	}
}

// learnBatch learns from one conversation's batch.
func (a *Agent) learnBatch(b *batch) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*a.o.ReplyTimeout)
	defer cancel()
	t := turn{group: b.group, private: b.group == "", sender: b.person}
	var msgs []extract.Message
	var from []memory.HistoryMessage
	for _, m := range b.msgs {
		// a frozen person's words are not even read: nothing about them
		// may be written, and what they said is what would be
		if a.mem.Frozen(m.Pubkey) {
			a.ls.frozenSkipped.Add(1)
			continue
		}
		msgs = append(msgs, extract.Message{Sender: m.Sender, Pubkey: m.Pubkey, At: m.Timestamp, Text: m.Content})
		from = append(from, m)
	}
	if len(msgs) == 0 {
		return
	}
	cands, err := a.learner.Extract(ctx, a.where(t), msgs)
	if err != nil {
		a.learnFailed("extract", err)
		return
	}
	var items []memory.Item
	var sources []memory.HistoryMessage
	var kept []extract.Candidate
	var similar [][]extract.Existing
	foreign := map[string]recalled{} // other authors' memories shown to the model, by the id it saw
	for _, c := range cands {
		it, ok := a.candidateItem(c, t, from[c.Message])
		if !ok {
			continue
		}
		items, sources, kept = append(items, it), append(sources, from[c.Message]), append(kept, c)
		// in a group, search as the message's author: a member, who
		// reads what the group's readers read
		ts := t
		if !t.private {
			ts.sender = from[c.Message].Pubkey
		}
		similar = append(similar, a.similar(ctx, it, ts, foreign))
	}
	if len(items) == 0 {
		return
	}
	picked := make([]extract.Candidate, len(items))
	for i, it := range items {
		picked[i] = extract.Candidate{Text: it.Text}
	}
	decisions, err := a.learner.Decide(ctx, picked, similar)
	if err != nil {
		a.learnFailed("decide", err)
		return
	}
	for i, it := range items {
		// the model took its time: what was deleted, erased or frozen
		// meanwhile is not written
		if !a.lq.wanted(sources[i].EventID) || a.mem.Frozen(it.Author) || it.Subject != "" && a.mem.Frozen(it.Subject) {
			a.ls.ignored.Add(1)
			continue
		}
		a.noteGroup(kept[i], it, t)
		if ok, replaced := a.applyLearnt(ctx, it, decisions[i], t, foreign); ok {
			a.notePerson(kept[i], it, t, replaced)
		}
	}
	if err := a.flush(ctx); err != nil {
		a.log.Error("learnt memories not written yet; will retry", "err", err)
	}
}

func (a *Agent) learnFailed(what string, err error) {
	a.ls.dropped.Add(1)
	if errors.Is(err, extract.ErrBudget) {
		return // counted and logged by the learner
	}
	a.log.Warn("learning from conversation failed: batch dropped", "step", what, "err", err)
}

// where names the conversation for the model.
func (a *Agent) where(t turn) string {
	if t.private {
		n, _ := a.mem.Npub(t.sender)
		return fmt.Sprintf("a private conversation between you and %s", n.Name())
	}
	g, _ := a.mem.Group(t.group)
	if g.Name != "" {
		return fmt.Sprintf("the group %q", g.Name)
	}
	return "a group"
}

// candidateItem places a candidate: the tier and scope of the
// conversation, never wider, and the person it is about when that person
// is not frozen. The text is sanitized again: it is the model's writing.
func (a *Agent) candidateItem(c extract.Candidate, t turn, m memory.HistoryMessage) (memory.Item, bool) {
	it := memory.Item{
		Text: a.keys.Sanitize(c.Text).Text, Source: memory.SourceAgent, Author: m.Pubkey,
		Confidence: c.Confidence, CreatedAt: m.Timestamp,
		Context: fmt.Sprintf("learnt from conversation: %s, message %s (%s)", c.Kind, m.EventID, time.Unix(m.Timestamp, 0).UTC().Format(time.DateOnly)),
	}
	if len(c.Topics) > 0 {
		it.Context += "; topics: " + strings.Join(c.Topics, ", ")
	}
	if t.private {
		it.Tier, it.Subject = snowclaw.TierPrivate, t.sender
	} else {
		it.Tier, it.Group, it.Subject = snowclaw.TierGroup, t.group, c.About
	}
	if it.Subject != "" && a.mem.Frozen(it.Subject) {
		a.ls.frozenSkipped.Add(1)
		return memory.Item{}, false
	}
	if c.Confidence <= 0 {
		it.Confidence = 0.5
	}
	return it, true
}

// noteGroup keeps a group's decisions and themes in its record
// (docs/agent.md#records-of-people-and-groups) from what was learnt there.
func (a *Agent) noteGroup(c extract.Candidate, it memory.Item, t turn) {
	if t.private {
		return
	}
	changed := false
	if c.Kind == extract.KindDecision {
		changed = a.mem.AddDecision(t.group, it.Text, it.CreatedAt)
	}
	for _, tp := range c.Topics {
		if len(tp) <= 64 {
			changed = a.mem.AddTheme(t.group, tp) || changed
		}
	}
	if changed {
		a.dirtied()
	}
}

// similar finds the memories of the item's scope most like it, as the
// conversation it came from may see them: through the search index, then
// the agent's own lexical recall (an item not indexed yet, or worded so
// the index misses it). Other authors' memories are shown under the first
// 12 hex digits of their event id and noted in foreign: a contradiction
// of one stands beside it (contradict) rather than being dropped. Another
// relay's (layered recall) are left out: learning writes beside, or
// versions, only what is stored here.
func (a *Agent) similar(ctx context.Context, it memory.Item, t turn, foreign map[string]recalled) []extract.Existing {
	const n = 5
	var out []extract.Existing
	seen := map[string]bool{}
	add := func(x memory.Item) {
		if !seen[x.ID] && len(out) < n {
			seen[x.ID] = true
			out = append(out, extract.Existing{ID: x.ID, Text: x.Text, At: x.UpdatedAt})
		}
	}
	for _, r := range a.recallItems(ctx, t, it.Text, n) {
		if r.origin != "" && r.origin != snowclaw.OriginLocal {
			continue
		}
		if r.author != "" && r.author != a.pk {
			x := r.item
			x.ID = r.event[:12]
			foreign[x.ID] = r
			add(x)
			continue
		}
		add(r.item)
	}
	for _, x := range a.mem.Recall(it.Text, func(x memory.Item) bool { return a.audienceMayRead(x, t) }, n) {
		add(x)
	}
	return out
}

// applyLearnt writes one decision: a new memory, a new version of an old
// one (one path for every new version: Supersede), or nothing. It reports
// whether something was written and, for a new version, the old text.
func (a *Agent) applyLearnt(ctx context.Context, it memory.Item, d extract.Decision, t turn, foreign map[string]recalled) (bool, string) {
	switch d.Action {
	case extract.ActionNothing:
		a.ls.ignored.Add(1)
	case extract.ActionUpdate:
		if f, ok := foreign[d.Target]; ok {
			return a.contradict(ctx, it, f, t), ""
		}
		old, ok := a.mem.Item(d.Target)
		if !ok || !inScope(old, t) {
			a.ls.ignored.Add(1)
			return false, ""
		}
		evt, err := a.currentEvent(ctx, old)
		if err == nil {
			it.Topic = ""
			_, _, err = a.Supersede(ctx, old.ID, evt, it)
		}
		if err != nil {
			a.log.Warn("learnt update not written", "old", old.ID, "err", err)
			a.ls.ignored.Add(1)
			return false, ""
		}
		a.ls.updated.Add(1)
		return true, old.Text
	default:
		if _, fresh := a.mem.Remember(it); fresh {
			a.ls.added.Add(1)
			return true, ""
		}
		a.ls.ignored.Add(1)
	}
	return false, ""
}

// LearningStatus is what learning is doing (`snowclaw memory status`).
type LearningStatus struct {
	Enabled       bool          `json:"enabled"`
	Why           string        `json:"why,omitempty"` // why it is off
	Model         string        `json:"model,omitempty"`
	Debounce      string        `json:"debounce"`
	BatchSize     int           `json:"batch_size"`
	CallsPerHour  int           `json:"calls_per_hour"`
	CompactEvery  string        `json:"compact_every"`
	SummaryAfter  string        `json:"summary_after"`
	SummaryTokens int           `json:"summary_tokens"`
	SummaryShare  float64       `json:"summary_share"`
	ScopeItems    int           `json:"scope_items"`
	Stats         LearningStats `json:"stats"`
	Items         int           `json:"items"`
	// LastSummary is the newest weekly summary the agent holds (nil:
	// none yet).
	LastSummary *SummaryNote `json:"last_summary,omitempty"`
}

// SummaryNote names one weekly summary: its conversation (a group, or a
// person in private), the stretch its topic says it covers, and its text.
type SummaryNote struct {
	ID        string        `json:"id"`
	Topic     string        `json:"topic"`
	Tier      snowclaw.Tier `json:"tier"`
	Group     string        `json:"group,omitempty"`
	Person    string        `json:"person,omitempty"` // npub, private conversations
	Text      string        `json:"text"`
	CreatedAt int64         `json:"created_at"`
}

// LearningStatus reports learning's settings and counters, and why it is
// off when it is.
func (a *Agent) LearningStatus() LearningStatus {
	l := a.o.Learning
	st := LearningStatus{
		Enabled: a.learner != nil, Debounce: l.Debounce.String(), BatchSize: l.BatchSize,
		CallsPerHour: l.CallsPerHour, CompactEvery: "never (memory compact only)", SummaryAfter: l.SummaryAfter.String(),
		SummaryTokens: l.SummaryTokens, SummaryShare: l.SummaryShare,
		ScopeItems: l.ScopeItems, Stats: a.learningStats(),
	}
	items := a.mem.Items()
	st.Items = len(items)
	st.LastSummary = lastSummary(items)
	if l.CompactEvery > 0 {
		st.CompactEvery = l.CompactEvery.String()
	}
	if a.o.LLM != nil {
		st.Model = a.o.LLM.Name()
	}
	switch {
	case a.o.LLM == nil:
		st.Why = "no model configured ([agent] ollama_model): the agent keeps memory but neither replies nor learns"
	case !l.Enabled:
		st.Why = "learning is turned off ([agent.learning] enabled = false)"
	case a.learner == nil:
		st.Why = "the model does not answer structured JSON"
	}
	return st
}
