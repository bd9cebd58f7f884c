package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/memory"
)

// turn is one incoming message the agent may learn from and answer.
type turn struct {
	group   string // "" in a private conversation
	private bool
	sender  string // hex
	msg     memory.HistoryMessage
	history []memory.HistoryMessage // before msg, oldest first
	replyTo *nostr.Event            // the group event answered (nil in private)
	note    string                  // what the agent just learnt, for the prompt
}

// learn acts on an explicit intent (docs/agent.md#learning-when-told): a memory
// item written at once, items forgotten at once, or a lesson. It returns
// a line for the reply prompt saying what was done.
func (a *Agent) learn(t turn) string {
	if a.backlog.wasSeen(t.msg.EventID) {
		return "" // the previous leader acted on it (standby.go)
	}
	in := parseIntent(t.msg.Content, a.o.Name)
	tier, scope := snowclaw.TierGroup, t.group
	if t.private {
		tier, scope = snowclaw.TierPrivate, t.sender
	}
	switch in.kind {
	case intentRemember:
		if a.mem.Frozen(t.sender) {
			return "The sender asked you to remember something, but their memory is frozen: nothing was stored. Tell them so."
		}
		it := memory.Item{
			Text: in.text, Source: "explicit_user", Tier: tier, Group: t.group,
			Subject: t.sender, Author: t.sender, Confidence: 0.9,
		}
		if t.sender == a.o.Owner {
			it.Source = "owner"
		}
		stored, fresh := a.mem.Remember(it)
		a.log.Info("memory item stored on request", "id", stored.ID, "tier", stored.Tier, "new", fresh)
		a.flushNow()
		return fmt.Sprintf("You have just stored this memory (%s tier): %q. Confirm briefly.", tier, in.text)
	case intentForget:
		gone := a.mem.ForgetText(tier, scope, in.text)
		a.learning.Unlearn(gone)
		a.log.Info("memory items forgotten on request", "count", len(gone), "tier", tier)
		a.flushNow()
		if len(gone) == 0 {
			return fmt.Sprintf("The sender asked you to forget %q; no stored memory matched. Say so.", in.text)
		}
		return fmt.Sprintf("You have just forgotten %d stored memories matching %q. Confirm briefly.", len(gone), in.text)
	case intentCorrection:
		if !a.correctsAgent(t) {
			return ""
		}
		if a.mem.Frozen(t.sender) {
			return "The sender is correcting you, but their memory is frozen: the correction was not saved. Acknowledge it."
		}
		l, _ := a.mem.Learn(a.lessonFrom(t, fmt.Sprintf("%s corrected you: %s", t.msg.Sender, in.text)))
		a.log.Info("lesson learnt from a correction", "id", l.ID, "tier", l.LessonTier())
		// written at once like an explicit memory, so the person's
		// export, forget and destroy find it as soon as they are answered
		a.flushNow()
		return "The sender is correcting you; the correction was saved as a lesson. Acknowledge it."
	}
	return ""
}

// lessonFrom makes a lesson of someone's words with the scope of the place
// they were said (docs/agent.md#learning-when-told): what the owner teaches in private is global;
// anything said in a group stays that group's, anything else said in
// private stays that person's, and either way it remembers whose words
// it holds, so their forget, export and destroy reach it.
func (a *Agent) lessonFrom(t turn, text string) memory.Lesson {
	l := memory.Lesson{Text: text, Source: "correction", Subject: t.sender, Enabled: true}
	switch {
	case t.private && a.o.Owner != "" && t.sender == a.o.Owner:
	case t.private:
		l.Tier = snowclaw.TierPrivate
	default:
		l.Tier, l.Group = snowclaw.TierGroup, t.group
	}
	return l
}

// correctsAgent tells a correction of the agent from one between people:
// in private it always is; in a group the agent must have spoken last.
func (a *Agent) correctsAgent(t turn) bool {
	if t.private || len(t.history) == 0 {
		return t.private
	}
	return t.history[len(t.history)-1].Self
}

// llmFailed turns a failed model call into a lesson (failures teach too:
// docs/agent.md#learning-when-told), deduplicated by its text.
func (a *Agent) llmFailed(err error) {
	a.llmErr.Add(1)
	l, fresh := a.mem.Learn(memory.Lesson{Text: "A model call failed: " + shortError(err), Source: "llm_failure", Enabled: true})
	if fresh {
		a.log.Info("lesson learnt from a failed model call", "id", l.ID)
	}
	a.dirtied()
}

func shortError(err error) string {
	s := err.Error()
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// flushNow writes dirty records at once (explicit requests outlive a
// kill -9: docs/agent.md#persistence). It runs on the worker, so the next message is
// handled only once the memory is stored.
func (a *Agent) flushNow() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.flush(ctx); err != nil {
		a.log.Error("immediate flush failed; will retry", "err", err)
	}
}

// dirtied wakes the flusher when enough records wait.
func (a *Agent) dirtied() {
	if a.mem.Dirty() >= a.o.FlushEvery {
		select {
		case a.kick <- struct{}{}:
		default:
		}
	}
}
