package learn

import (
	"context"
	"fmt"

	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/memory"
)

// The per-scope cap (Options.ScopeItems) archives what it takes out of a
// group's or a person's memory instead of deleting it: the overflow is
// folded into an archive record of that scope, an internal item of the
// agent whose snow:supersedes names each archived event. So the archived
// memories leave RAM, search and the prompt as any superseded version
// does, stay on the relay where their readers find them with
// include:superseded, and the agent's Restore brings one back.

// maxArchived bounds the events one archive record names; past it the
// scope gets a new part, so no record grows without end.
const maxArchived = 200

// capScopes keeps at most Options.ScopeItems memories the agent inferred
// per group or person, archiving the oldest; what people asked to be
// remembered is never capped. It returns how many were archived.
func (l *Learning) capScopes(ctx context.Context) int {
	limit := l.o.ScopeItems
	archived := 0
	for scope, list := range byScope(l.mem.Items()) {
		before := archived
		kept := 0
		var drop, events []string
		var gone []memory.Item
		for _, it := range list {
			if it.Source != memory.SourceAgent || it.Tier == snowclaw.TierInternal {
				continue
			}
			if kept++; kept <= limit {
				continue
			}
			evt, err := l.host.CurrentEvent(ctx, it)
			if err != nil {
				continue // not stored yet: archived on a later run
			}
			drop, events, gone = append(drop, it.ID), append(events, evt), append(gone, it)
		}
		for len(drop) > 0 {
			n := min(len(drop), maxArchived)
			keep := l.archiveRecord(scope, n)
			if err := l.mem.Merge(keep, drop[:n], events[:n]); err != nil {
				l.log.Warn("overflow not archived", "scope", scope, "err", err)
				break
			}
			archived += n
			drop, events = drop[n:], events[n:]
		}
		// the person's record keeps no copy of what left the prompt
		l.Unlearn(gone[:archived-before])
	}
	return archived
}

// archiveRecord is the id of the archive record of scope with room for n
// more events, created when there is none.
func (l *Learning) archiveRecord(scope string, n int) string {
	for part := 1; ; part++ {
		text := fmt.Sprintf("Archive of older learnt memories of %s (part %d), kept by the per-scope cap as history", scope, part)
		id := memory.ItemID(snowclaw.TierInternal, "", text)
		if it, ok := l.mem.Item(id); ok {
			if len(it.Merges)+n <= maxArchived {
				return id
			}
			continue
		}
		it, _ := l.mem.Remember(memory.Item{
			Text: text, Tier: snowclaw.TierInternal, Topic: memory.ArchiveTopic, Source: memory.SourceAgent,
			Context: "the events named by snow:supersedes are archived memories; restore one with snowclaw memory restore <event id>",
		})
		return it.ID
	}
}
