package agent

import (
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/extract"
	"github.com/snowclaw/snowclaw/agent/memory"
	"github.com/snowclaw/snowclaw/agent/prompt"
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
	if pk == "" || pk == a.pk || a.frozen(pk) {
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

// senderContext is the sender's record as the prompt of t may show it:
// the part shown everywhere, plus the facet learnt in this very
// conversation when the relay's read rule lets the reply's whole audience
// read a memory of that scope (asked as for an item: memory.Probe).
func (a *Agent) senderContext(pk string, t turn) prompt.Sender {
	n, _ := a.mem.Npub(pk)
	s := prompt.Sender{
		Pubkey: pk, Npub: snowclaw.NpubOf(pk), Name: n.Name(), Owner: pk == a.o.Owner && pk != "",
		Notes: n.Notes, OwnerNotes: n.OwnerNotes, Prefs: publicPrefs(n.Preferences),
	}
	tier, group := snowclaw.TierGroup, t.group
	if t.private {
		tier, group = snowclaw.TierPrivate, ""
	}
	f := n.Facet(group)
	if len(f.Notes)+len(f.Preferences) == 0 || !a.mayShow(t, memory.Probe(a.pk, tier, group, pk)) {
		return s
	}
	if t.private && pk != t.sender {
		return s
	}
	s.Notes = append(s.Notes[:len(s.Notes):len(s.Notes)], f.Notes...)
	for k, v := range f.Preferences {
		if _, set := s.Prefs[k]; !set { // what the owner set wins
			s.Prefs[k] = v
		}
	}
	return s
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

// PersonContext is what a prompt answering pk shows of their record: in
// group, or in private with them when group is "" (`snowclaw eval
// learning`'s person record probes ask it).
func (a *Agent) PersonContext(pk, group string) (notes []string, prefs map[string]string) {
	t := turn{group: group, private: group == "", sender: pk}
	s := a.senderContext(pk, t)
	return append(s.Notes, s.OwnerNotes...), s.Prefs
}
