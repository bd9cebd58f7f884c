package learn

import (
	"github.com/snowclaw/snowclaw/agent/extract"
	"github.com/snowclaw/snowclaw/agent/memory"
)

// Records of people and groups from learning: notes and preferences
// learnt in conversation (docs/agent.md#where-it-lives), a group's
// decisions and themes. What is learnt about a person goes into the facet
// of their record for the scope it was learnt in (memory.Facet): the
// private facet from a private conversation with them, the group's facet
// from a group. The agent's prompt shows a facet only where the whole
// audience of the reply may read what was learnt there.

// notePerson files a learnt memory about the message's sender in their
// record: a preference under its first topic, a fact as a note; a new
// version replaces the note of the old one. Plans, events and decisions
// stay memories (decisions and topics also go to the group's record).
func (l *Learning) notePerson(c extract.Candidate, it memory.Item, t Conversation, replaced string) {
	pk, group := c.About, t.Group
	if t.Private {
		group = ""
		if pk != t.Sender {
			return // about someone else: their record is theirs to read
		}
	}
	if pk == "" || pk == l.env.Pubkey || l.mem.Frozen(pk) {
		return
	}
	changed := false
	switch c.Kind {
	case extract.KindPreference:
		if key := memory.PrefKey(c.Topics); key != "" {
			changed = l.mem.LearnPref(pk, group, key, it.Text)
		} else {
			changed = l.mem.LearnNote(pk, group, it.Text, replaced)
		}
	case extract.KindFact:
		changed = l.mem.LearnNote(pk, group, it.Text, replaced)
	}
	if changed {
		l.host.Dirtied()
	}
}

// noteGroup keeps a group's decisions and themes in its record
// (docs/agent.md#records-of-people-and-groups) from what was learnt there.
func (l *Learning) noteGroup(c extract.Candidate, it memory.Item, t Conversation) {
	if t.Private {
		return
	}
	changed := false
	if c.Kind == extract.KindDecision {
		changed = l.mem.AddDecision(t.Group, it.Text, it.CreatedAt)
	}
	for _, tp := range c.Topics {
		if len(tp) <= 64 {
			changed = l.mem.AddTheme(t.Group, tp) || changed
		}
	}
	if changed {
		l.host.Dirtied()
	}
}

// Unlearn takes forgotten memories out of their person's record too: a
// note there is a copy of a learnt memory, shown in the same scope.
func (l *Learning) Unlearn(gone []memory.Item) {
	for _, it := range gone {
		if it.Subject != "" && it.Source == memory.SourceAgent {
			l.mem.UnlearnNote(it.Subject, it.Group, it.Text)
		}
	}
}
