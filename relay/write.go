package relay

import (
	"context"
	"errors"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/policies"
)

// RejectDeleted keeps deleted events deleted (docs/access.md).
func (r *Relay) RejectDeleted(_ context.Context, evt *snowclaw.Event) error {
	return r.tombs.refusal(evt)
}

// RejectOlderVersion refuses a replaceable or addressable event when a
// version at least as new is stored, so the older one is neither stored,
// broadcast nor handed to plugins; save repeats the check under the
// address's lock.
func (r *Relay) RejectOlderVersion(ctx context.Context, evt *snowclaw.Event) error {
	if !nostr.IsReplaceableKind(evt.Kind) && !nostr.IsAddressableKind(evt.Kind) {
		return nil
	}
	err := versionCheck(ctx, r.store, evt)
	if errors.Is(err, errAlreadyStored) {
		// the rules still run, so that a copy of an event the sender
		// may not write is refused as it would be were it not stored;
		// save then answers that it is
		return nil
	}
	return err
}

// RejectForeignDeletion refuses a NIP-09 request naming an event its
// author may not delete: someone else's, or group history that NIP-29
// state is rebuilt from.
func (r *Relay) RejectForeignDeletion(ctx context.Context, evt *snowclaw.Event) error {
	if evt.Kind != snowclaw.KindDeletion {
		return nil
	}
	targets := snowclaw.TagValues(evt.Event, "e")
	if len(targets) == 0 {
		return nil
	}
	ch, err := r.store.QueryEvents(ctx, nostr.Filter{IDs: targets, Limit: len(targets)})
	if err != nil {
		return snowclaw.StoreFailed(err, "looking up the events a deletion names")
	}
	var refusal error
	for target := range ch {
		switch {
		case refusal != nil:
		case !r.mayLearnOf(ctx, evt.PubKey, target):
			// answered as if it were not stored: "not the author of <id>"
			// would confirm that an event the requester may not read
			// exists (ids of the relay's own group events are computable)
		case target.PubKey != evt.PubKey:
			refusal = snowclaw.Blocked("you are not the author of event %s", target.ID)
		case snowclaw.IsGroupStateKind(target.Kind) || snowclaw.IsGroupMetadataKind(target.Kind):
			refusal = snowclaw.Blocked("group moderation history cannot be deleted; ask an admin to delete the group")
		}
	}
	return refusal
}

// mayLearnOf reports whether whoever hears the answer to an event by
// signer (policies.Hearer) may learn that target exists.
func (r *Relay) mayLearnOf(ctx context.Context, signer string, target *nostr.Event) bool {
	return r.canRead(policies.Hearer(ctx, signer), snowclaw.ReadEvent(target))
}

// ApplyDeletion (an OnEventSaved hook) carries out a stored NIP-09 request: its `e` targets
// (checked by RejectForeignDeletion) and its `a` addresses, every version
// up to the request's created_at. The address is read with
// snowclaw.ParseAddress, which keeps colons inside the d tag (every
// snowclaw d has some); splitting on every colon would find none of them.
func (r *Relay) ApplyDeletion(ctx context.Context, deletion *snowclaw.Event) {
	r.tombs.record(deletion)
	if deletion.Kind != snowclaw.KindDeletion {
		return
	}
	if targets := snowclaw.TagValues(deletion.Event, "e"); len(targets) > 0 {
		r.deleteMatching(ctx, nostr.Filter{IDs: targets, Authors: []string{deletion.PubKey}, Limit: len(targets)})
	}
	for _, a := range snowclaw.TagValues(deletion.Event, "a") {
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
		// that passed RejectForeignDeletion unnamed would delete it
		if f.Matches(evt) && !snowclaw.IsGroupStateKind(evt.Kind) && !snowclaw.IsGroupMetadataKind(evt.Kind) {
			targets = append(targets, evt)
		}
	}
	for _, evt := range targets {
		if err := r.Delete(ctx, evt); err != nil {
			r.log.Error("deletion", "id", evt.ID, "err", err)
		}
	}
}
