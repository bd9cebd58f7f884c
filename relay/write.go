package relay

import (
	"context"
	"fmt"

	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/policies"
)

// rejectDeleted keeps deleted events deleted (DESIGN.md §3).
func (r *Relay) rejectDeleted(_ context.Context, evt *nostr.Event) (bool, string) {
	reason := r.tombs.reason(evt)
	return reason != "", reason
}

// rejectOlderVersion refuses a replaceable or addressable event when a
// version at least as new is stored, so the older one is neither stored,
// broadcast nor handed to plugins (khatru would do all three).
func (r *Relay) rejectOlderVersion(ctx context.Context, evt *nostr.Event) (bool, string) {
	if !nostr.IsReplaceableKind(evt.Kind) && !nostr.IsAddressableKind(evt.Kind) {
		return false, ""
	}
	newer, err := newerStored(ctx, r.store, evt)
	if err != nil {
		return true, "error: could not look up the stored version; try again"
	}
	if newer {
		return true, fmt.Sprintf("duplicate: a version of %s at least as new is already stored", address(evt))
	}
	return false, ""
}

// replaceEvent is the store step for replaceable and addressable events.
// It repeats the newer-version check under a per-address lock: two
// versions racing past rejectOlderVersion must not both win. Returning
// ErrDupEvent makes khatru skip OnEventSaved and the broadcast.
func (r *Relay) replaceEvent(ctx context.Context, evt *nostr.Event) error {
	unlock := r.guard.lock(address(evt))
	defer unlock()
	newer, err := newerStored(ctx, r.store, evt)
	if err != nil {
		return err
	}
	if newer {
		return eventstore.ErrDupEvent
	}
	return r.store.ReplaceEvent(ctx, evt)
}

// rejectForeignDeletion refuses a NIP-09 request naming an event its
// author may not delete: someone else's, or group history that NIP-29
// state is rebuilt from. (khatru's own deletion step is not used.)
func (r *Relay) rejectForeignDeletion(ctx context.Context, evt *nostr.Event) (bool, string) {
	if evt.Kind != snowclaw.KindDeletion {
		return false, ""
	}
	targets := snowclaw.TagValues(evt, "e")
	if len(targets) == 0 {
		return false, ""
	}
	ch, err := r.store.QueryEvents(ctx, nostr.Filter{IDs: targets, Limit: len(targets)})
	if err != nil {
		return true, "error: could not look up the events to delete; try again"
	}
	reason := ""
	for target := range ch {
		switch {
		case reason != "":
		case !r.mayLearnOf(ctx, evt.PubKey, target):
			// answered as if it were not stored: "not the author of <id>"
			// would confirm that an event the requester may not read
			// exists (ids of the relay's own group events are computable)
		case target.PubKey != evt.PubKey:
			reason = fmt.Sprintf("blocked: you are not the author of event %s", target.ID)
		case snowclaw.IsGroupStateKind(target.Kind) || snowclaw.IsGroupMetadataKind(target.Kind):
			reason = "blocked: group moderation history cannot be deleted; ask an admin to delete the group"
		}
	}
	return reason != "", reason
}

// mayLearnOf reports whether whoever hears the answer to an event by
// signer (policies.Hearer) may learn that target exists.
func (r *Relay) mayLearnOf(ctx context.Context, signer string, target *nostr.Event) bool {
	return r.canRead(policies.Hearer(ctx, signer), target)
}

// deleteEvent runs an event through every delete hook (store and, later,
// the search index), for deletions the relay decides itself.
func (r *Relay) deleteEvent(ctx context.Context, evt *nostr.Event) error {
	for _, del := range r.khatru.DeleteEvent {
		if err := del(ctx, evt); err != nil {
			return err
		}
	}
	return nil
}

// Publish stores an event the relay or its agent made and broadcasts it to
// open subscriptions, through the same hooks a client's event passes.
func (r *Relay) Publish(ctx context.Context, evt *nostr.Event) error {
	return r.add(ctx, evt)
}

// add runs an event through khatru's write pipeline (RejectEvent hooks,
// store or replace, OnEventSaved) and then our broadcast, which khatru's
// AddEvent lacks. The error is the client's OK reason, prefix included.
func (r *Relay) add(ctx context.Context, evt *nostr.Event) error {
	// before any hook: a refused write must not have changed any state
	if err := r.disk.check(); err != nil {
		r.met.wrote(evt, true, err)
		return err
	}
	skip, err := r.khatru.AddEvent(ctx, evt)
	r.met.wrote(evt, skip, err)
	if err != nil {
		return err
	}
	if !skip {
		r.broadcast(evt)
	}
	return nil
}

// applyDeletion carries out a stored NIP-09 request: its `e` targets
// (checked by rejectForeignDeletion) and its `a` addresses, every version
// up to the request's created_at. khatru would split an address on every
// colon and never find one whose d tag has one, as every snowclaw d does.
func (r *Relay) applyDeletion(ctx context.Context, deletion *nostr.Event) {
	r.tombs.record(deletion)
	if deletion.Kind != snowclaw.KindDeletion {
		return
	}
	if targets := snowclaw.TagValues(deletion, "e"); len(targets) > 0 {
		r.deleteMatching(ctx, nostr.Filter{IDs: targets, Authors: []string{deletion.PubKey}, Limit: len(targets)})
	}
	for _, a := range snowclaw.TagValues(deletion, "a") {
		kind, pk, d, err := snowclaw.ParseAddress(a)
		if err != nil || pk != deletion.PubKey {
			continue // only authors delete their own addresses
		}
		if snowclaw.IsGroupMetadataKind(kind) {
			continue
		}
		until := deletion.CreatedAt
		f := nostr.Filter{Kinds: []int{kind}, Authors: []string{pk}, Until: &until, Limit: 10}
		if nostr.IsAddressableKind(kind) {
			f.Tags = nostr.TagMap{"d": {d}}
		}
		r.deleteMatching(ctx, f)
	}
}

func (r *Relay) deleteMatching(ctx context.Context, f nostr.Filter) {
	ch, err := r.store.QueryEvents(ctx, f)
	if err != nil {
		r.log.Error("deletion lookup", "filter", f.String(), "err", err)
		return
	}
	var targets []*nostr.Event
	for evt := range ch {
		// badger answers an ids filter by id alone, authors ignored: the
		// filter is what decides, or a request naming someone else's id
		// that passed rejectForeignDeletion unnamed would delete it
		if f.Matches(evt) && !snowclaw.IsGroupStateKind(evt.Kind) && !snowclaw.IsGroupMetadataKind(evt.Kind) {
			targets = append(targets, evt)
		}
	}
	for _, evt := range targets {
		if err := r.deleteEvent(ctx, evt); err != nil {
			r.log.Error("deletion", "id", evt.ID, "err", err)
		}
	}
}
