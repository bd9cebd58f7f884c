package learn

import (
	"context"
	"fmt"
	"time"

	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/memory"
)

// Turn is one message the agent has just received, in its conversation.
type Turn struct {
	Conversation
	Msg     memory.HistoryMessage
	History []memory.HistoryMessage // before Msg, oldest first
}

// Told acts on what t explicitly asks of the agent's memory
// (docs/agent.md#learning-when-told): a memory item written at once,
// items forgotten at once, or a lesson. It returns a line for the reply
// prompt saying what was done ("" when t asks nothing).
func (l *Learning) Told(t Turn) string {
	in := parseIntent(t.Msg.Content, l.env.Name)
	tier, scope := snowclaw.TierGroup, t.Group
	if t.Private {
		tier, scope = snowclaw.TierPrivate, t.Sender
	}
	switch in.kind {
	case intentRemember:
		if l.mem.Frozen(t.Sender) {
			return "The sender asked you to remember something, but their memory is frozen: nothing was stored. Tell them so."
		}
		it := memory.Item{
			Text: in.text, Source: "explicit_user", Tier: tier, Group: t.Group,
			Subject: t.Sender, Author: t.Sender, Confidence: 0.9,
		}
		if t.Sender == l.env.Owner {
			it.Source = "owner"
		}
		stored, fresh := l.mem.Remember(it)
		l.log.Info("memory item stored on request", "id", stored.ID, "tier", stored.Tier, "new", fresh)
		l.flushNow()
		return fmt.Sprintf("You have just stored this memory (%s tier): %q. Confirm briefly.", tier, in.text)
	case intentForget:
		gone := l.mem.ForgetText(tier, scope, in.text)
		l.Unlearn(gone)
		l.log.Info("memory items forgotten on request", "count", len(gone), "tier", tier)
		l.flushNow()
		if len(gone) == 0 {
			return fmt.Sprintf("The sender asked you to forget %q; no stored memory matched. Say so.", in.text)
		}
		return fmt.Sprintf("You have just forgotten %d stored memories matching %q. Confirm briefly.", len(gone), in.text)
	case intentCorrection:
		if !correctsAgent(t) {
			return ""
		}
		if l.mem.Frozen(t.Sender) {
			return "The sender is correcting you, but their memory is frozen: the correction was not saved. Acknowledge it."
		}
		lesson, _ := l.mem.Learn(l.lessonFrom(t, fmt.Sprintf("%s corrected you: %s", t.Msg.Sender, in.text)))
		l.log.Info("lesson learnt from a correction", "id", lesson.ID, "tier", lesson.LessonTier())
		// written at once like an explicit memory, so the person's
		// export, forget and destroy find it as soon as they are answered
		l.flushNow()
		return "The sender is correcting you; the correction was saved as a lesson. Acknowledge it."
	}
	return ""
}

// lessonFrom makes a lesson of someone's words with the scope of the place
// they were said (docs/agent.md#learning-when-told): what the owner teaches in private is global;
// anything said in a group stays that group's, anything else said in
// private stays that person's, and either way it remembers whose words
// it holds, so their forget, export and destroy reach it.
func (l *Learning) lessonFrom(t Turn, text string) memory.Lesson {
	lesson := memory.Lesson{Text: text, Source: "correction", Subject: t.Sender, Enabled: true}
	switch {
	case t.Private && l.env.Owner != "" && t.Sender == l.env.Owner:
	case t.Private:
		lesson.Tier = snowclaw.TierPrivate
	default:
		lesson.Tier, lesson.Group = snowclaw.TierGroup, t.Group
	}
	return lesson
}

// correctsAgent tells a correction of the agent from one between people:
// in private it always is; in a group the agent must have spoken last.
func correctsAgent(t Turn) bool {
	if t.Private || len(t.History) == 0 {
		return t.Private
	}
	return t.History[len(t.History)-1].Self
}

// Failed turns a failed model call into a lesson (failures teach too:
// docs/agent.md#learning-when-told), deduplicated by its text.
func (l *Learning) Failed(err error) {
	lesson, fresh := l.mem.Learn(memory.Lesson{Text: "A model call failed: " + shortError(err), Source: "llm_failure", Enabled: true})
	if fresh {
		l.log.Info("lesson learnt from a failed model call", "id", lesson.ID)
	}
	l.host.Dirtied()
}

func shortError(err error) string {
	s := err.Error()
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// flushNow writes dirty records at once (explicit requests outlive a
// kill -9: docs/agent.md#persistence). Told runs on the agent's worker,
// so the next message is handled only once the memory is stored.
func (l *Learning) flushNow() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.host.Flush(ctx); err != nil {
		l.log.Error("immediate flush failed; will retry", "err", err)
	}
}
