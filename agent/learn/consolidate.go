package learn

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/snowclaw/snowclaw/agent/memory"
)

// Consolidation ("dreaming", docs/agent.md#consolidation-dreaming): duplicates merged with their originals kept as history,
// per-scope caps, weekly summaries of old conversation. It runs every
// Options.CompactEvery (compactLoop) and on `snowclaw memory compact`.

// CompactReport says what one consolidation did.
type CompactReport struct {
	Merged    int    `json:"merged"`    // duplicates folded into another memory (kept as history)
	Archived  int    `json:"archived"`  // memories archived by the per-scope cap (kept as history)
	Removed   int    `json:"removed"`   // memories deleted by the global cap
	Summaries int    `json:"summaries"` // weekly summaries written
	Note      string `json:"note,omitempty"`
}

// Compact consolidates the long-term items now: it merges duplicates (the
// same normalized text, then near-duplicates by word overlap, within one
// tier and scope), archives what is over the per-scope cap (archive.go),
// applies the global cap max
// (0: Env.MaxItems), and, when learning is on, writes the weekly
// summaries that are due. Every change is written before it returns.
func (l *Learning) Compact(ctx context.Context, max int) (CompactReport, error) {
	if max <= 0 {
		max = l.env.MaxItems
	}
	var rep CompactReport
	rep.Merged = l.mergeDuplicates(ctx)
	rep.Archived = l.capScopes(ctx)
	rep.Removed = len(l.mem.Compact(max))
	if l.model != nil {
		n, note := l.summarize(ctx)
		rep.Summaries, rep.Note = n, note
	} else {
		rep.Note = "learning is off: no summaries"
	}
	l.st.compactions.Add(1)
	return rep, l.host.Flush(ctx)
}

// compactLoop consolidates on a schedule.
func (l *Learning) compactLoop(stop <-chan struct{}) {
	tick := time.NewTicker(l.o.CompactEvery)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		rep, err := l.Compact(ctx, 0)
		cancel()
		if err != nil {
			l.log.Error("scheduled consolidation failed", "err", err)
			continue
		}
		l.log.Info("memory consolidated", "merged", rep.Merged, "removed", rep.Removed, "summaries", rep.Summaries)
	}
}

// byScope groups items by tier and scope, newest first within each.
func byScope(items []memory.Item) map[string][]memory.Item {
	out := map[string][]memory.Item{}
	for _, it := range items {
		k := string(it.Tier) + "|" + it.Scope()
		out[k] = append(out[k], it)
	}
	for _, list := range out {
		slices.SortFunc(list, func(x, y memory.Item) int {
			return cmp.Or(cmp.Compare(y.UpdatedAt, x.UpdatedAt), cmp.Compare(x.ID, y.ID))
		})
	}
	return out
}

// mergeDuplicates folds each near-duplicate into the newest memory like
// it in the same scope. The older ones' events stay on the relay, named
// by the kept memory's snow:supersedes, so search and the prompt leave
// them and the owner can still read and restore them.
func (l *Learning) mergeDuplicates(ctx context.Context) int {
	merged := 0
	for _, list := range byScope(l.mem.Items()) {
		// archive records say alike things of different scopes: never merged
		list = slices.DeleteFunc(list, memory.Item.IsArchive)
		gone := map[string]bool{}
		for i, keep := range list {
			if gone[keep.ID] {
				continue
			}
			var drop, events []string
			for _, other := range list[i+1:] {
				if gone[other.ID] || memory.Similarity(keep.Text, other.Text) < l.o.Similar {
					continue
				}
				evt, err := l.host.CurrentEvent(ctx, other)
				if err != nil {
					continue // not stored yet: merged on a later run
				}
				drop, events = append(drop, other.ID), append(events, evt)
				gone[other.ID] = true
			}
			if len(drop) == 0 {
				continue
			}
			if err := l.mem.Merge(keep.ID, drop, events); err != nil {
				l.log.Warn("duplicates not merged", "keep", keep.ID, "err", err)
				continue
			}
			merged += len(drop)
		}
	}
	return merged
}
