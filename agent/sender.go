package agent

import (
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/memory"
	"github.com/snowclaw/snowclaw/agent/prompt"
)

// A person's record as a prompt shows it: what learning files in the
// record is kept per scope (memory.Facet), and the prompt shows a facet
// only where the whole audience of the reply may read what was learnt
// there.

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

// PersonContext is what a prompt answering pk shows of their record: in
// group, or in private with them when group is "" (`snowclaw eval
// learning`'s person record probes ask it).
func (a *Agent) PersonContext(pk, group string) (notes []string, prefs map[string]string) {
	t := turn{group: group, private: group == "", sender: pk}
	s := a.senderContext(pk, t)
	return append(s.Notes, s.OwnerNotes...), s.Prefs
}
