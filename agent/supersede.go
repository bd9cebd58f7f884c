package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/memory"
)

// Supersede writes next as the new version of the item oldID, whose
// current event is oldEvent: a person's correction or a promotion to a
// wider tier (docs/privacy.md#rectify-and-promote). The old event stays on the
// relay as history; the new one names it in snow:supersedes, which hides
// it from search and keeps it out of RAM at the next start. The new
// version is written before Supersede returns, and its event is returned.
func (a *Agent) Supersede(ctx context.Context, oldID, oldEvent string, next memory.Item) (memory.Item, *nostr.Event, error) {
	next.Supersedes = oldEvent
	next.Text = a.keys.Sanitize(next.Text).Text
	next.Detail = a.keys.Sanitize(next.Detail).Text
	it, err := a.mem.Replace(oldID, next)
	if err != nil {
		return memory.Item{}, nil, err
	}
	if err := a.flush(ctx); err != nil {
		return it, nil, fmt.Errorf("writing the new version: %w", err)
	}
	var evt *nostr.Event
	err = a.o.Query(ctx, nostr.Filter{Kinds: []int{snowclaw.KindAppData}, Authors: []string{a.pk}, Tags: nostr.TagMap{"d": {ItemD(it)}}}, func(e *nostr.Event) bool {
		evt = e
		return false
	})
	if err == nil && evt == nil {
		err = errors.New("the new version was not stored")
	}
	if err != nil {
		return it, nil, fmt.Errorf("reading the new version back: %w", err)
	}
	return it, evt, nil
}

// Ruled is told that the owner's ruling now holds the address of topic
// (plugins/agentlink, as it is stored): the item there leaves RAM, as at
// a restart, and none is written there again (memory.Store.Rule).
func (a *Agent) Ruled(topic string) []memory.Item { return a.mem.Rule(topic) }

// currentEvent is the id of the stored event of an item's current
// version (its d tag is its own).
func (a *Agent) currentEvent(ctx context.Context, it memory.Item) (string, error) {
	var id string
	var at nostr.Timestamp
	err := a.o.Query(ctx, nostr.Filter{Kinds: []int{snowclaw.KindAppData}, Authors: []string{a.pk}, Tags: nostr.TagMap{"d": {ItemD(it)}}}, func(e *nostr.Event) bool {
		if id == "" || e.CreatedAt > at {
			id, at = e.ID, e.CreatedAt
		}
		return true
	})
	if err == nil && id == "" {
		err = fmt.Errorf("memory item %s has no stored event yet", it.ID)
	}
	return id, err
}

// ErrNotArchived: Restore was given an event that is not a stored memory
// item of the agent.
var ErrNotArchived = errors.New("not a stored memory item of the agent")

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
	if it.Subject != "" && a.mem.Frozen(it.Subject) {
		return memory.Item{}, fmt.Errorf("the memory is about a person whose memory is frozen")
	}
	it.UpdatedAt = a.o.Now().Unix()
	it, _ = a.mem.Remember(it)
	return it, a.flush(ctx)
}
