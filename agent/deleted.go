package agent

import (
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/memory"
)

// The relay deletes events the agent holds copies of in RAM (moderators'
// delete-event, delete-group, NIP-09 requests, erasures). Unless RAM
// follows, what was deleted goes on into prompts and recall, and the next
// flush writes the agent's records again under new ids: the deletion is
// undone. The relay calls these from its delete hooks, before the
// deleting request is answered. Nothing here publishes: the events are
// gone already.

// Deleted is told of one event the relay's store deleted. An agent
// record goes from RAM only when the event was the agent's own (signed
// by its key): nobody makes it forget by deleting a look-alike of their
// own. A message goes from every buffer that holds it.
func (a *Agent) Deleted(evt *snowclaw.Event) {
	if evt == nil {
		return
	}
	if evt.Kind == snowclaw.KindAppData && evt.PubKey == a.pk {
		a.mu.Lock()
		own := a.ownDels[evt.D]
		a.mu.Unlock()
		if own {
			return // its own request: the record left RAM before (see publishOwnDeletion)
		}
		rec, err := a.codec.Decode(evt)
		if err != nil {
			return // never read into RAM either
		}
		if a.mem.DropDeleted(rec) {
			a.log.Info("agent record deleted on the relay; dropped from memory", "d", evt.D, "id", evt.ID)
		}
		return
	}
	for _, r := range a.allRings() {
		r.Remove(func(m memory.HistoryMessage) bool { return m.EventID == evt.ID })
	}
	a.learning.DropMessage(evt.ID)
}

// GroupDeleted forgets a deleted group: its record, its items and
// lessons (flushed or not) and its buffer. A group created later under
// the same id starts with nothing of the old one. The relay calls it
// when the delete-group is carried out, so that no flush can write the
// old group's records in between; the event loop calls it again when it
// reaches the delete-group, for what messages queued before it added.
func (a *Agent) GroupDeleted(g string) {
	if g == "" {
		return
	}
	a.learning.DropGroup(g)
	items, lessons := a.mem.EraseGroup(g)
	a.mu.Lock()
	delete(a.rings, g)
	a.mu.Unlock()
	if items+lessons > 0 {
		a.log.Info("group deleted; its memory dropped", "group", g, "items", items, "lessons", lessons)
	}
}
