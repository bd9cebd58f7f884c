package agent

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/agent/learn"
	"github.com/snowclaw/snowclaw/agent/memory"
	"github.com/snowclaw/snowclaw/agent/privmsg"
)

// The agent composes its learning (agent/learn): the turn path hands it
// each message (told, queueLearn), a failed model call becomes its lesson,
// the delete hooks tell it what the relay deleted, and the agent is its
// host (learnHost). Persistence, the conversation buffers, recall and the
// rule of what a reply may quote stay the agent's, so what learning
// writes goes the way every record of the agent goes.

// conv is the conversation of t as learning knows it.
func (t turn) conv() learn.Conversation {
	return learn.Conversation{Group: t.group, Private: t.private, Sender: t.sender}
}

// turnIn is a turn in conversation c, without a message: what the
// audience rules of replies read.
func turnIn(c learn.Conversation) turn {
	return turn{group: c.Group, private: c.Private, sender: c.Sender}
}

// queueLearn offers a turn's message to learning. Messages that were
// explicit requests ("remember …", a correction) were acted on already,
// and the previous leader read those it handled (standby.go).
func (a *Agent) queueLearn(t turn) {
	if t.note != "" || a.backlog.wasSeen(t.msg.EventID) {
		return
	}
	a.learning.Offer(t.conv(), t.msg)
}

// told acts on what t explicitly asks of the agent's memory
// (learn.Learning.Told) and returns the line for the reply prompt.
func (a *Agent) told(t turn) string {
	if a.backlog.wasSeen(t.msg.EventID) {
		return "" // the previous leader acted on it (standby.go)
	}
	return a.learning.Told(learn.Turn{Conversation: t.conv(), Msg: t.msg, History: t.history})
}

// llmFailed counts a failed model call, which becomes a lesson.
func (a *Agent) llmFailed(err error) {
	a.llmErr.Add(1)
	a.learning.Failed(err)
}

// LearningStatus reports learning's settings and counters, and why it is
// off when it is.
func (a *Agent) LearningStatus() learn.Status { return a.learning.Status() }

// Compact consolidates the long-term items now (learn.Learning.Compact):
// duplicates merged, the per-scope and global caps, the weekly summaries
// that are due. max is the global cap (0: Options.MaxItems).
func (a *Agent) Compact(ctx context.Context, max int) (learn.CompactReport, error) {
	return a.learning.Compact(ctx, max)
}

// learnHost is the agent as learning's host (learn.Host).
type learnHost struct{ a *Agent }

func (h learnHost) Dirtied()                        { h.a.dirtied() }
func (h learnHost) Flush(ctx context.Context) error { return h.a.flush(ctx) }

func (h learnHost) CurrentEvent(ctx context.Context, it memory.Item) (string, error) {
	return h.a.currentEvent(ctx, it)
}

func (h learnHost) Supersede(ctx context.Context, oldID, oldEvent string, next memory.Item) (memory.Item, *nostr.Event, error) {
	return h.a.Supersede(ctx, oldID, oldEvent, next)
}

func (h learnHost) Recall(ctx context.Context, c learn.Conversation, query string, n int) []learn.Recalled {
	return h.a.recallItems(ctx, turnIn(c), query, n)
}

func (h learnHost) InScope(it memory.Item, c learn.Conversation) bool {
	return inScope(it, turnIn(c))
}

func (h learnHost) MayRead(it memory.Item, c learn.Conversation) bool {
	return h.a.audienceMayRead(it, turnIn(c))
}

func (h learnHost) OpenPrivate(ctx context.Context, wrap *nostr.Event) (privmsg.Message, error) {
	return privmsg.Unwrap(ctx, wrap, h.a.sk)
}

func (h learnHost) TrimHistory(before func(group, person string) int64) {
	h.a.mu.Lock()
	defer h.a.mu.Unlock()
	for key, r := range h.a.rings {
		r.DropBefore(before(ringOwner(key)))
	}
}
