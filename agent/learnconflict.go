package agent

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
func (a *Agent) contradict(ctx context.Context, it memory.Item, f recalled, t turn) bool {
	topic := f.item.Topic
	if a.mayTakeTopic(ctx, topic) {
		it.Topic = topic
		it.Context += "; contradicts " + f.event + " by " + snowclaw.NpubOf(f.author)
		if _, err := a.mem.RememberAt(it); err == nil {
			a.ls.added.Add(1)
			return true
		} else if !errors.Is(err, memory.ErrTopicTaken) {
			a.log.Warn("learnt contradiction not written", "topic", topic, "err", err)
			a.ls.ignored.Add(1)
			return false
		}
	}
	it.Topic = ""
	if _, fresh := a.mem.Remember(it); fresh {
		a.ls.added.Add(1)
		return true
	}
	a.ls.ignored.Add(1)
	return false
}

// mayTakeTopic reports whether the agent may write a memory at exactly
// topic: one memory.MayAnswerAt allows, with no event of the agent at
// that d tag (current or history).
func (a *Agent) mayTakeTopic(ctx context.Context, topic string) bool {
	if !memory.MayAnswerAt(topic) {
		return false
	}
	taken := false
	err := a.o.Query(ctx, nostr.Filter{Kinds: []int{snowclaw.KindAppData}, Authors: []string{a.pk}, Tags: nostr.TagMap{"d": {snowclaw.PrefixMemoryItem + topic}}, Limit: 1}, func(*nostr.Event) bool {
		taken = true
		return false
	})
	return err == nil && !taken
}
