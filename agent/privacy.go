package agent

import (
	"context"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/memory"
	"github.com/snowclaw/snowclaw/agent/privmsg"
)

// A person's rights (docs/privacy.md) are carried out by the relay's privacy
// service, which owns the store; these methods are its view of the
// agent's RAM.

// PersonData is everything the agent holds in RAM about one person.
type PersonData struct {
	Npub     *memory.Npub
	Items    []memory.Item           // memories about them (their subject)
	Lessons  []memory.Lesson         // lessons made of their words
	Messages []memory.HistoryMessage // their messages in the buffers
}

// Person collects what the agent holds about pk.
func (a *Agent) Person(pk string) PersonData {
	var d PersonData
	if n, ok := a.mem.Npub(pk); ok {
		d.Npub = &n
	}
	for _, it := range a.mem.Items() {
		if it.Subject == pk {
			d.Items = append(d.Items, it)
		}
	}
	for _, l := range a.mem.Lessons() {
		if l.Subject == pk {
			d.Lessons = append(d.Lessons, l)
		}
	}
	for _, r := range a.allRings() {
		for _, m := range r.Messages() {
			if m.Pubkey == pk {
				d.Messages = append(d.Messages, m)
			}
		}
	}
	return d
}

// Freeze stops (or, off, resumes) new memories about a person; what is
// stored stays readable. It is flushed at once.
func (a *Agent) Freeze(ctx context.Context, pk string, on bool) error {
	a.mem.TouchNpub(pk, a.o.Now().Unix(), "")
	v := ""
	if on {
		v = "true"
	}
	a.mem.SetPref(pk, memory.FrozenPref, v)
	return a.flush(ctx)
}

// Frozen reports whether new memories about pk are refused.
func (a *Agent) Frozen(pk string) bool { return a.mem.Frozen(pk) }

// ItemD is the d tag of an item's event.
func ItemD(it memory.Item) string { return snowclaw.MemoryItemD(it.Topic) }

// EraseItems removes matching items from RAM without publishing NIP-09
// deletions: the caller hard-deletes their events.
func (a *Agent) EraseItems(match func(memory.Item) bool) []memory.Item {
	return a.mem.Erase(match)
}

// LessonD is the d tag of a lesson's event.
func LessonD(l memory.Lesson) string { return snowclaw.MemoryItemD(memory.LessonTopic(l.ID)) }

// EraseLessons removes matching lessons from RAM without publishing NIP-09
// deletions: the caller hard-deletes their events.
func (a *Agent) EraseLessons(match func(memory.Lesson) bool) []memory.Lesson {
	return a.mem.EraseLessons(match)
}

// ForgetNotes removes matching notes from a person's record; the record
// is rewritten at once.
func (a *Agent) ForgetNotes(ctx context.Context, pk string, match func(string) bool) (int, error) {
	n := a.mem.RemoveNotes(pk, match)
	if n == 0 {
		return 0, nil
	}
	return n, a.flush(ctx)
}

// ErasePerson removes everything about pk from RAM: their record, their
// items, the lessons made of their words, their messages in every buffer
// (and their private conversation), their place in group records. It
// returns how many items and lessons, and how many messages, went.
func (a *Agent) ErasePerson(ctx context.Context, pk string) (items, messages int, err error) {
	a.learning.DropPerson(pk)
	items = len(a.mem.Erase(func(it memory.Item) bool { return it.Subject == pk || it.Author == pk }))
	items += len(a.mem.EraseLessons(func(l memory.Lesson) bool { return l.Subject == pk }))
	a.mem.ErasePerson(pk)
	a.mu.Lock()
	delete(a.rings, dmKey(pk))
	a.mu.Unlock()
	for _, r := range a.allRings() {
		messages += r.Remove(func(m memory.HistoryMessage) bool { return m.Pubkey == pk })
	}
	return items, messages, a.flush(ctx)
}

// SendPrivate sends a NIP-17 message from the agent to pk (the privacy
// service's answers to commands received in private).
func (a *Agent) SendPrivate(ctx context.Context, pk, text string, tags nostr.Tags) error {
	wrap, err := privmsg.Wrap(ctx, a.sk, pk, text, tags)
	if err != nil {
		return err
	}
	return a.o.Publish(ctx, &wrap)
}

// privateCommand offers a private message to the rights handler before
// the normal turn path; a handled command gets its answer and nothing
// else (no model call, nothing learnt, nothing buffered).
func (a *Agent) privateCommand(from, id, text string) bool {
	if a.o.Commands == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), a.o.ReplyTimeout)
	defer cancel()
	reply, handled := a.o.Commands(ctx, from, strings.TrimSpace(text))
	if !handled {
		return false
	}
	if err := a.SendPrivate(ctx, from, reply, nostr.Tags{{"e", id, "", "reply"}}); err != nil {
		a.log.Error("answer to a private command not sent", "err", err)
	}
	return true
}
