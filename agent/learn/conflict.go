package learn

import (
	"context"
	"errors"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/memory"
)

// A learnt contradiction of another author's memory stays visible in the
// conflict dashboard (docs/agent.md#add-update-or-nothing). The
// agent cannot write a new version of someone else's event, and naming it
// in snow:supersedes would hide it as if the agent had the last word. So
// the learnt memory is written under the same topic, beside it: both stay
// current, search ranks them by trust, and the conflict dashboard (the
// index's Conflicts, by topic and source) lists them until the owner
// rules.

// contradict writes it under the topic of f, another author's memory it
// contradicts. When that topic cannot be the agent's (it is reserved, or
// an event of the agent already holds that d tag: writing there would
// replace it, current or history) it is added under its own topic. It
// reports whether something was written.
func (l *Learning) contradict(ctx context.Context, it memory.Item, f Recalled, t Conversation) bool {
	topic := f.Item.Topic
	if l.mayTakeTopic(ctx, topic) {
		it.Topic = topic
		it.Context += "; contradicts " + f.Event + " by " + snowclaw.NpubOf(f.Author)
		if _, err := l.mem.RememberAt(it); err == nil {
			l.st.added.Add(1)
			return true
		} else if !errors.Is(err, memory.ErrTopicTaken) {
			l.log.Warn("learnt contradiction not written", "topic", topic, "err", err)
			l.st.ignored.Add(1)
			return false
		}
	}
	it.Topic = ""
	if _, fresh := l.mem.Remember(it); fresh {
		l.st.added.Add(1)
		return true
	}
	l.st.ignored.Add(1)
	return false
}

// mayTakeTopic reports whether the agent may write a memory at exactly
// topic: one memory.MayAnswerAt allows, with no event of the agent at
// that d tag (current or history).
func (l *Learning) mayTakeTopic(ctx context.Context, topic string) bool {
	if !memory.MayAnswerAt(topic) {
		return false
	}
	taken := false
	err := l.env.Query(ctx, nostr.Filter{Kinds: []int{snowclaw.KindAppData}, Authors: []string{l.env.Pubkey}, Tags: nostr.TagMap{"d": {snowclaw.PrefixMemoryItem + topic}}, Limit: 1}, func(*nostr.Event) bool {
		taken = true
		return false
	})
	return err == nil && !taken
}
