package agent

import (
	"context"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/dynconfig"
	"github.com/snowclaw/snowclaw/agent/learn"
	"github.com/snowclaw/snowclaw/agent/memory"
	"github.com/snowclaw/snowclaw/agent/privmsg"
	"github.com/snowclaw/snowclaw/agent/prompt"
)

// shouldReply is the respond-mode rule: all — every message; mention —
// messages that address the agent; owner — the owner's messages; none —
// never. In private every message addresses the agent.
func (a *Agent) shouldReply(sender, group string, addressed bool) bool {
	switch a.cfg.Resolve(sender, group).RespondMode {
	case dynconfig.All:
		return true
	case dynconfig.Mention:
		return addressed
	case dynconfig.Owner:
		return sender == a.o.Owner && a.o.Owner != ""
	}
	return false
}

// reply assembles the prompt on the worker (RAM only, so it sees the
// state as of this message) and queues the model call and the publish for
// the reply writers, so a slow model never holds up the event queue. When
// the reply queue is full the message stays buffered and remembered but
// is not answered.
func (a *Agent) reply(t turn) {
	if a.o.LLM == nil || a.backlog.answered(t.msg.EventID) {
		return
	}
	job := replyJob{t: t, p: a.buildPrompt(t)}
	a.replyWG.Add(1)
	a.replying.Add(1)
	select {
	case a.replyQ <- job:
	default:
		a.replying.Add(-1)
		a.replyWG.Done()
		a.log.Warn("reply queue full: message not answered", "id", t.msg.EventID)
	}
}

type replyJob struct {
	t turn
	p prompt.Prompt
}

// replyWriter runs queued replies one after another; MaxReplies of them
// run side by side.
func (a *Agent) replyWriter(q <-chan replyJob) {
	for job := range q {
		a.write(job)
		a.replying.Add(-1)
		a.replyWG.Done()
	}
}

func (a *Agent) write(job replyJob) {
	ctx, cancel := context.WithTimeout(a.runContext(), a.o.ReplyTimeout)
	defer cancel()
	text, err := a.o.LLM.Chat(ctx, job.p.Messages)
	if err != nil {
		a.log.Error("model call failed", "model", a.o.LLM.Name(), "id", job.t.msg.EventID, "err", err)
		a.llmFailed(err)
		return
	}
	text = a.keys.Sanitize(text).Text
	if err := a.send(ctx, job.t, text); err != nil {
		a.log.Error("reply not published", "id", job.t.msg.EventID, "err", err)
		return
	}
	a.replied.Add(1)
}

// send publishes the reply: kind 9 with the group's h tag and a reply
// reference in a group, a gift-wrapped NIP-17 message in private. The
// agent's own events are not fed back, so the reply is buffered here.
func (a *Agent) send(ctx context.Context, t turn, text string) error {
	now := a.o.Now()
	if t.private {
		wrap, err := privmsg.Wrap(ctx, a.sk, t.sender, text, nostr.Tags{{"e", t.msg.EventID, "", "reply"}})
		if err != nil {
			return err
		}
		if err := a.o.Publish(ctx, &wrap); err != nil {
			return err
		}
		a.ring(dmKey(t.sender)).Push(memory.HistoryMessage{Sender: a.o.Name, Npub: a.npub, Pubkey: a.pk, Content: text, EventID: wrap.ID, Kind: 14, Timestamp: now.Unix(), Self: true})
		return nil
	}
	evt := nostr.Event{
		Kind: snowclaw.KindChat, CreatedAt: nostr.Timestamp(now.Unix()), Content: text,
		Tags: nostr.Tags{{"h", t.group}, {"e", t.replyTo.ID, "", "reply"}, {"p", t.sender}},
	}
	if err := evt.Sign(a.sk); err != nil {
		return err
	}
	if err := a.o.Publish(ctx, &evt); err != nil {
		return err
	}
	a.ring(t.group).Push(memory.HistoryMessage{Sender: a.o.Name, Npub: a.npub, Pubkey: a.pk, Content: text, EventID: evt.ID, Group: t.group, Kind: evt.Kind, Timestamp: now.Unix(), Self: true})
	return nil
}

// buildPrompt fills the context of docs/agent.md#context from RAM: identity, group
// memory, the sender's record, the last context_history messages,
// recalled memories and lessons.
func (a *Agent) buildPrompt(t turn) prompt.Prompt {
	settings := a.cfg.Resolve(t.sender, t.group)
	hist := t.history
	if n := settings.ContextHistory; len(hist) > n {
		hist = hist[len(hist)-n:]
	}
	var ids []string
	in := prompt.Input{
		AgentName: a.o.Name, AgentNpub: a.npub,
		OwnerNpub:    snowclaw.NpubOf(a.o.Owner),
		Instructions: a.o.Instructions,
		Sender:       a.senderContext(t.sender, t),
		Current:      line(t.msg),
		Lessons:      a.mem.TopLessons(5, func(l memory.Lesson) bool { return a.lessonMayShow(l, t) }),
		Budget:       a.o.TokenBudget,
	}
	in.Memories, ids = a.recall(t)
	if a.o.Owner == "" {
		in.OwnerNpub = ""
	} else if o, ok := a.mem.Npub(a.o.Owner); ok {
		in.OwnerName = o.Name()
	}
	if t.note != "" {
		in.Instructions = joinNonEmpty(in.Instructions, t.note)
	}
	for _, h := range hist {
		in.History = append(in.History, line(h))
	}
	if !t.private {
		in.Group = a.groupContext(t.group)
	}
	p := prompt.Assemble(in, a.tok)
	a.noteContext(t, ids, p)
	return p
}

func line(h memory.HistoryMessage) prompt.Line {
	return prompt.Line{Group: h.Group, From: h.Sender, Kind: h.Kind, ID: h.EventID, Owner: h.IsOwner, Content: h.Content}
}

// publicPrefs drops the agent's own bookkeeping keys from what the model
// is shown.
func publicPrefs(p map[string]string) map[string]string {
	out := make(map[string]string, len(p))
	for k, v := range p {
		if len(k) < 9 || k[:9] != "snowclaw." {
			out[k] = v
		}
	}
	return out
}

func (a *Agent) groupContext(id string) *prompt.Group {
	g, _ := a.mem.Group(id)
	pg := &prompt.Group{ID: id, Name: g.Name, Purpose: g.Purpose, Themes: g.Themes}
	for _, d := range g.Decisions {
		pg.Decisions = append(pg.Decisions, d.Text)
	}
	for _, m := range g.Members {
		pg.Members = append(pg.Members, m.Name)
	}
	return pg
}

// recall finds long-term memories for the prompt (recallItems) and
// returns their texts and ids, best first.
func (a *Agent) recall(t turn) ([]string, []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var texts, ids []string
	for _, r := range a.recallItems(ctx, t, t.msg.Content, 5) {
		text := r.Item.Text
		if r.Origin != "" && r.Origin != snowclaw.OriginLocal {
			text = "(from the relay " + r.Origin + ") " + text
		}
		texts, ids = append(texts, text), append(ids, r.Item.ID)
	}
	return texts, ids
}

// recallItems finds up to n memory items relevant to query through the
// search index when the relay has one, else over the agent's own items;
// in either case only what the audience of a reply in t may read.
func (a *Agent) recallItems(ctx context.Context, t turn, query string, n int) []learn.Recalled {
	if a.o.Recall != nil {
		evts, err := a.o.Recall(ctx, RecallRequest{Query: query, Group: t.group, Person: t.sender, Limit: 4 * n, Reply: replyOf(a.pk, t)})
		if err == nil {
			return a.recallEvents(evts, t, n)
		}
		a.log.Warn("recall through the search index failed; using RAM", "err", err)
	}
	items := a.mem.Recall(query, func(it memory.Item) bool { return a.audienceMayRead(it, t) }, n)
	out := make([]learn.Recalled, 0, len(items))
	for _, it := range items {
		out = append(out, learn.Recalled{Item: it})
	}
	return out
}

// recallEvents keeps the memory items among the search results that the
// reply's audience may read, decrypted.
func (a *Agent) recallEvents(found []snowclaw.SearchHit, t turn, n int) []learn.Recalled {
	var out []learn.Recalled
	for _, f := range found {
		evt := snowclaw.ReadEvent(f.Event)
		if !evt.IsMemoryItem() {
			continue
		}
		rec, err := a.codec.Decode(evt)
		if err != nil || rec.Item == nil || !inScope(*rec.Item, t) || !a.mayShow(t, f.Event) {
			continue
		}
		if out = append(out, learn.Recalled{Item: *rec.Item, Event: evt.ID, Author: evt.PubKey, Origin: f.Origin}); len(out) == n {
			break
		}
	}
	return out
}

// lessonMayShow is the audience rule of lessons, the same as that of
// items (audienceMayRead): a group lesson only in its group, a private one
// only in its person's private conversation; global ones are the owner's
// or the agent's own (failures), never another person's words.
func (a *Agent) lessonMayShow(l memory.Lesson, t turn) bool {
	if l.LessonTier() == snowclaw.TierInternal {
		return l.Subject == "" || a.o.Owner != "" && l.Subject == a.o.Owner
	}
	return a.audienceMayRead(memory.Item{Tier: l.LessonTier(), Group: l.Group, Subject: l.Subject}, t)
}

// audienceMayRead decides whether an item the agent holds may go into
// the reply of t: it belongs to the conversation (inScope) and the
// relay's read rule lets everyone who reads the reply read it (mayShow),
// asked about the item's tier markers.
func (a *Agent) audienceMayRead(it memory.Item, t turn) bool {
	return inScope(it, t) && a.mayShow(t, memory.Probe(a.pk, it.Tier, it.Group, it.Subject))
}

// mayShow asks the relay's read rule (Options.MayShow) whether evt may be
// quoted in the reply of t.
func (a *Agent) mayShow(t turn, evt *nostr.Event) bool {
	if a.o.MayShow == nil {
		return true
	}
	return a.o.MayShow(replyOf(a.pk, t), evt)
}

// replyOf is the reply to t as the read rule sees it, content aside: a
// kind 9 of the agent in the group, or a gift wrap to the person (send).
func replyOf(agentPK string, t turn) *nostr.Event {
	if t.private {
		return &nostr.Event{Kind: snowclaw.KindGiftWrap, Tags: nostr.Tags{{"p", t.sender}}}
	}
	return &nostr.Event{Kind: snowclaw.KindChat, PubKey: agentPK, Tags: nostr.Tags{{"h", t.group}, {"p", t.sender}}}
}

// inScope is what belongs in a conversation, whoever may read it: in a
// group public items and that group's; in private public items and the
// person's own. Who may read is the relay's rule (mayShow), not this.
func inScope(it memory.Item, t turn) bool {
	switch it.Tier {
	case snowclaw.TierPublic:
		return true
	case snowclaw.TierGroup:
		return !t.private && it.Group == t.group
	case snowclaw.TierPrivate:
		return t.private && it.Subject == t.sender
	}
	return false
}

func joinNonEmpty(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n" + b
}
