package agent

import (
	"github.com/snowclaw/snowclaw/agent/extract"
	"github.com/snowclaw/snowclaw/agent/memory"
)

// Person records from learning: notes and preferences learnt in
// conversation (docs/agent.md#where-it-lives). What
// is learnt about a person goes into the facet of their record for the
// scope it was learnt in (memory.Facet): the private facet from a private
// conversation with them, the group's facet from a group. The prompt
// shows a facet only where the whole audience of the reply may read what
// was learnt there (senderContext).

// notePerson files a learnt memory about the message's sender in their
// record: a preference under its first topic, a fact as a note; a new
// version replaces the note of the old one. Plans, events and decisions
// stay memories (decisions and topics also go to the group's record).
func (a *Agent) notePerson(c extract.Candidate, it memory.Item, t turn, replaced string) {
	pk, group := c.About, t.group
	if t.private {
		group = ""
		if pk != t.sender {
			return // about someone else: their record is theirs to read
		}
	}
	if pk == "" || pk == a.pk || a.mem.Frozen(pk) {
		return
	}
	changed := false
	switch c.Kind {
	case extract.KindPreference:
		if key := memory.PrefKey(c.Topics); key != "" {
			changed = a.mem.LearnPref(pk, group, key, it.Text)
		} else {
			changed = a.mem.LearnNote(pk, group, it.Text, replaced)
		}
	case extract.KindFact:
		changed = a.mem.LearnNote(pk, group, it.Text, replaced)
	}
	if changed {
		a.dirtied()
	}
}

// unlearn takes forgotten memories out of their person's record too: a
// note there is a copy of a learnt memory, shown in the same scope.
func (a *Agent) unlearn(gone []memory.Item) {
	for _, it := range gone {
		if it.Subject != "" && it.Source == memory.SourceAgent {
			a.mem.UnlearnNote(it.Subject, it.Group, it.Text)
		}
	}
}
