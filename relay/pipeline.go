package relay

import (
	"context"
	"errors"

	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/relay/store"
)

// Hooks are how the rules and the plugins take part in the protocol,
// khatru-style: slices of small functions, run in order, filled once
// before the relay serves (never while it does). Rules and plugins
// append to them; the relay itself knows nothing of what they do.
//
// An event hook gets the event as the edge read it (snowclaw.ReadEvent:
// the websocket, Publish, the change log, Delete's read of the store),
// once for every hook it passes: its group, namespace, tier and the rest
// are fields, never read from the tags again.
type Hooks struct {
	// RejectEvent refuses an event before anything is stored or sent:
	// the first error is the client's OK false (a snowclaw reason).
	RejectEvent []func(ctx context.Context, evt *snowclaw.Event) error
	// OnEventSaved runs after an event is stored, before it is broadcast.
	OnEventSaved []func(ctx context.Context, evt *snowclaw.Event)
	// OnEphemeralEvent runs for an accepted ephemeral event (never stored).
	OnEphemeralEvent []func(ctx context.Context, evt *snowclaw.Event)
	// OnEventDeleted runs after the store removed an event (Delete):
	// the search index, the agent's memory, live config.
	OnEventDeleted []func(ctx context.Context, evt *snowclaw.Event)
	// RejectFilter refuses a REQ or COUNT filter before it runs: the
	// first error is the CLOSED reason. A search arrives parsed
	// (snowclaw.ReadFilter, once per filter at the websocket).
	RejectFilter []func(ctx context.Context, f snowclaw.Filter) error
}

// Publish stores an event the relay or its agent made and broadcasts it to
// open subscriptions, through the same hooks a client's event passes. An
// event already stored is no error.
func (r *Relay) Publish(ctx context.Context, evt *nostr.Event) error {
	if err := r.add(ctx, snowclaw.ReadEvent(evt)); !errors.Is(err, errAlreadyStored) {
		return err
	}
	return nil
}

// add is the write pipeline, the one path of every event: a client's, the
// agent's, the relay's own. The error is the client's OK reason;
// errAlreadyStored is an acceptance (OK true) with its message.
func (r *Relay) add(ctx context.Context, evt *snowclaw.Event) error {
	stored, err := r.write(ctx, evt)
	if errors.Is(err, errAlreadyStored) {
		r.met.wrote(evt, true, nil) // skipped, not refused
		return err
	}
	r.met.wrote(evt, !stored, err)
	return err
}

func (r *Relay) write(ctx context.Context, evt *snowclaw.Event) (stored bool, err error) {
	// before any hook: a refused write must not have changed any state
	if err := r.disk.check(); err != nil {
		return false, err
	}
	// the rules read the clock (created_at limits, expiry, late
	// publication): not on a clock that may be wrong
	if c := r.opts.ClockCheck; c != nil {
		if err := c(); err != nil {
			return false, err
		}
	}
	// the rules decide on the state every instance has, or not at all
	return r.onCurrentState(ctx, evt, r.decide)
}

// decide runs the rules on evt and, if they accept it, stores it and
// runs the saved hooks; byRules: a rule refused it.
func (r *Relay) decide(ctx context.Context, evt *snowclaw.Event) (stored, byRules bool, err error) {
	var held error // a rule kept the event without granting it (Held)
	for _, reject := range r.RejectEvent {
		if err := reject(ctx, evt); err != nil {
			if h := HeldReason(err); h != nil && held == nil && !nostr.IsEphemeralKind(evt.Kind) {
				held = h
				continue
			}
			return false, true, err
		}
	}
	if held != nil {
		stored, _, err := r.keep(ctx, evt)
		if err == nil || errors.Is(err, errAlreadyStored) {
			err = held
		}
		return stored, false, err
	}
	return r.keep(ctx, evt)
}

// keep stores an event the rules accepted (or held), runs the saved hooks
// and broadcasts it; an ephemeral one is only broadcast.
func (r *Relay) keep(ctx context.Context, evt *snowclaw.Event) (stored, byRules bool, err error) {
	if nostr.IsEphemeralKind(evt.Kind) {
		for _, on := range r.OnEphemeralEvent {
			on(ctx, evt)
		}
		r.broadcast(evt)
		return false, false, nil
	}
	pos, err := r.save(ctx, evt)
	if err != nil || pos < 0 {
		return false, false, err
	}
	// the hooks' own writes (a join's answer, the group's metadata)
	// decide for themselves, on the state this write caught up to: they
	// do not wait for the change log again, or a client's OK could wait
	// behind several catch-ups in a row
	ctx = WithPosition(withCaughtUp(store.WithDecidedAt(ctx, -1)), pos)
	for _, on := range r.OnEventSaved {
		on(ctx, evt)
	}
	r.expiry.track(evt)
	r.broadcast(evt)
	return true, false, nil
}

// save stores evt and returns its position in the store's order
// (store.Sequencer), or -1 when it stored nothing. An event already stored is errAlreadyStored (the
// client gets OK true: NIP-01 counts a duplicate as no failure); one
// older than the stored version of its address, which passed
// RejectOlderVersion in a race, is refused like it. Either way nobody
// else hears of it and no saved hook runs.
func (r *Relay) save(ctx context.Context, evt *snowclaw.Event) (int64, error) {
	if nostr.IsRegularKind(evt.Kind) {
		pos, err := r.store.SaveSequenced(ctx, evt.Event)
		if errors.Is(err, eventstore.ErrDupEvent) {
			return -1, errAlreadyStored
		}
		if errors.Is(err, store.ErrStale) {
			return -1, err
		}
		if err != nil {
			return -1, storeFailed(err)
		}
		return pos, nil
	}
	// the newer-version check and the replacement are one step under a
	// per-address lock: two versions racing past RejectOlderVersion
	// must not both win
	unlock := r.guard.lock(address(evt))
	defer unlock()
	if err := versionCheck(ctx, r.store, evt); err != nil {
		return -1, err
	}
	// a shared store settles the race with other instances itself
	switch err := r.store.ReplaceEvent(ctx, evt.Event); {
	case errors.Is(err, store.ErrNotNewer), errors.Is(err, eventstore.ErrDupEvent):
		return -1, nil
	case err != nil:
		return -1, storeFailed(err)
	}
	// replaceable versions carry no position here: nothing derived from
	// them depends on the order of several writers
	return 0, nil
}

type positionKey struct{}

// Position is the position in the store's order (store.Sequencer) of the
// event an OnEventSaved hook runs for: what state derived from several
// writers' events is ordered by. 0 when the store keeps none for it.
func Position(ctx context.Context) int64 {
	p, _ := ctx.Value(positionKey{}).(int64)
	return p
}

// WithPosition is ctx for the saved hooks of an event stored at pos: what
// the relay passes them, and what a plugin's tests pass to run its hooks
// as the relay does.
func WithPosition(ctx context.Context, pos int64) context.Context {
	return context.WithValue(ctx, positionKey{}, pos)
}

// storeFailed is the client's answer to a store error: the store's own
// refusal when it gives a reason (an event PostgreSQL cannot hold is
// invalid:), else the store failing (snowclaw.StoreFailed: a retryable
// error: without the driver's words, which the websocket logs).
func storeFailed(err error) error {
	return snowclaw.StoreFailed(err, "storing the event")
}

// Delete removes evt from the store and then tells every OnEventDeleted
// hook: the one way anything is deleted (NIP-09 requests, group
// moderation, rights, NIP-40 expiry). A store that fails is a
// snowclaw.StoreFailed, for whichever caller answers someone.
func (r *Relay) Delete(ctx context.Context, evt *nostr.Event) error {
	if err := r.store.DeleteEvent(ctx, evt); err != nil {
		return snowclaw.StoreFailed(err, "deleting event %s", evt.ID)
	}
	r.expiry.forget(evt.ID)
	e := snowclaw.ReadEvent(evt)
	for _, on := range r.OnEventDeleted {
		on(ctx, e)
	}
	return nil
}
