package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/memory"
)

// The per-scope cap (Learning.ScopeItems) archives what it takes out of a
// group's or a person's memory instead of deleting it: the overflow is
// folded into an archive record of that scope, an internal item of the
// agent whose snow:supersedes names each archived event. So the archived
// memories leave RAM, search and the prompt as any superseded version
// does, stay on the relay where their readers find them with
// include:superseded, and Restore brings one back.

// maxArchived bounds the events one archive record names; past it the
// scope gets a new part, so no record grows without end.
const maxArchived = 200

// ErrNotArchived: Restore was given an event that is not a stored memory
// item of the agent.
var ErrNotArchived = errors.New("not a stored memory item of the agent")

// capScopes keeps at most Learning.ScopeItems memories the agent inferred
// per group or person, archiving the oldest; what people asked to be
// remembered is never capped. It returns how many were archived.
func (a *Agent) capScopes(ctx context.Context) int {
	limit := a.o.Learning.ScopeItems
	archived := 0
	for scope, list := range byScope(a.mem.Items()) {
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
			evt, err := a.currentEvent(ctx, it)
			if err != nil {
				continue // not stored yet: archived on a later run
			}
			drop, events, gone = append(drop, it.ID), append(events, evt), append(gone, it)
		}
		for len(drop) > 0 {
			n := min(len(drop), maxArchived)
			keep := a.archiveRecord(scope, n)
			if err := a.mem.Merge(keep, drop[:n], events[:n]); err != nil {
				a.log.Warn("overflow not archived", "scope", scope, "err", err)
				break
			}
			archived += n
			drop, events = drop[n:], events[n:]
		}
		// the person's record keeps no copy of what left the prompt
		a.unlearn(gone[:archived-before])
	}
	return archived
}

// archiveRecord is the id of the archive record of scope with room for n
// more events, created when there is none.
func (a *Agent) archiveRecord(scope string, n int) string {
	for part := 1; ; part++ {
		text := fmt.Sprintf("Archive of older learnt memories of %s (part %d), kept by the per-scope cap as history", scope, part)
		id := memory.ItemID(snowclaw.TierInternal, "", text)
		if it, ok := a.mem.Item(id); ok {
			if len(it.Merges)+n <= maxArchived {
				return id
			}
			continue
		}
		it, _ := a.mem.Remember(memory.Item{
			Text: text, Tier: snowclaw.TierInternal, Topic: memory.ArchiveTopic, Source: memory.SourceAgent,
			Context: "the events named by snow:supersedes are archived memories; restore one with snowclaw memory restore <event id>",
		})
		return it.ID
	}
}

// Restore brings back an archived, merged or superseded memory of the
// agent: the item its event holds becomes current again, written anew at
// its own address, so what named the old event no longer hides it. It
// returns the restored item.
func (a *Agent) Restore(ctx context.Context, eventID string) (memory.Item, error) {
	var evt *nostr.Event
	err := a.o.Query(ctx, nostr.Filter{IDs: []string{eventID}, Authors: []string{a.pk}, Kinds: []int{snowclaw.KindAppData}}, func(e *nostr.Event) bool {
		evt = e
		return false
	})
	if err != nil {
		return memory.Item{}, err
	}
	if evt == nil {
		return memory.Item{}, fmt.Errorf("%w: %s", ErrNotArchived, eventID)
	}
	rec, err := a.codec.Decode(snowclaw.ReadEvent(evt))
	if err != nil || rec.Item == nil {
		return memory.Item{}, fmt.Errorf("%w: %s", ErrNotArchived, eventID)
	}
	it := *rec.Item
	if it.Subject != "" && a.frozen(it.Subject) {
		return memory.Item{}, fmt.Errorf("the memory is about a person whose memory is frozen")
	}
	it.UpdatedAt = a.o.Now().Unix()
	it, _ = a.mem.Remember(it)
	return it, a.flush(ctx)
}
