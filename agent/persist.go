package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/memory"
)

// flushLoop is the debounce of docs/design.md "The agent": dirty records are written
// when FlushEvery of them wait or FlushInterval has passed, whichever
// comes first. A crash loses at most FlushInterval of ordinary updates;
// explicit requests are flushed before the next message is handled.
func (a *Agent) flushLoop() {
	defer a.done.Done()
	tick := time.NewTicker(a.o.FlushInterval)
	defer tick.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-tick.C:
		case <-a.kick:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if err := a.flush(ctx); err != nil {
			a.log.Error("memory flush failed; will retry", "err", err)
		}
		cancel()
	}
}

// Flush writes every dirty record now and deletes the events of removed
// ones (CLI: memory flush).
func (a *Agent) Flush(ctx context.Context) error { return a.flush(ctx) }

// dirtied wakes the flusher when enough records wait.
func (a *Agent) dirtied() {
	if a.mem.Dirty() >= a.o.FlushEvery {
		select {
		case a.kick <- struct{}{}:
		default:
		}
	}
}

func (a *Agent) flush(ctx context.Context) error {
	a.flushMu.Lock()
	defer a.flushMu.Unlock()
	var errs []error
	for _, k := range a.mem.TakeDirty() {
		if err := a.persist(ctx, k); err != nil {
			a.mem.MarkDirty(k)
			errs = append(errs, err)
		}
	}
	if err := a.deleteRemoved(ctx); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		a.flushErr.Add(1)
		return errors.Join(errs...)
	}
	return nil
}

// persist publishes the current state of one record.
func (a *Agent) persist(ctx context.Context, k memory.Key) error {
	rec, ok := a.mem.Record(k)
	if !ok {
		return nil // removed since it was dirtied
	}
	evt, err := a.codec.Encode(rec)
	if err != nil {
		return fmt.Errorf("encoding %v: %w", k, err)
	}
	evt.CreatedAt = a.nextStamp(evt.Tags.GetD())
	if err := evt.Sign(a.sk); err != nil {
		return err
	}
	if err := a.o.Publish(ctx, &evt); err != nil {
		return &publishError{d: evt.Tags.GetD(), err: err}
	}
	a.flushed.Add(1)
	return nil
}

// publishError is the relay's refusal of one record's event in a flush,
// kept typed so that a caller can ask why one particular record was
// refused (refusedAs) without reading the joined error's text.
type publishError struct {
	d   string // the record's d tag
	err error  // the relay's answer, a snowclaw reason
}

func (e *publishError) Error() string { return fmt.Sprintf("publishing %s: %v", e.d, e.err) }
func (e *publishError) Unwrap() error { return e.err }

// refusedAs reports whether the flush error err holds the relay's refusal
// of record d for reason.
func refusedAs(err error, d string, reason snowclaw.Reason) bool {
	switch e := err.(type) {
	case nil:
		return false
	case *publishError:
		return e.d == d && snowclaw.ReasonOf(e.err) == reason
	case interface{ Unwrap() []error }:
		for _, inner := range e.Unwrap() {
			if refusedAs(inner, d, reason) {
				return true
			}
		}
	case interface{ Unwrap() error }:
		return refusedAs(e.Unwrap(), d, reason)
	}
	return false
}

// nextStamp gives each version of an address a created_at later than the
// last one written: the relay keeps a replaceable event only when it is
// strictly newer, and two flushes can fall in the same second.
func (a *Agent) nextStamp(d string) nostr.Timestamp {
	a.mu.Lock()
	defer a.mu.Unlock()
	ts := a.o.Now().Unix()
	if last := a.last[d]; ts <= last {
		ts = last + 1
	}
	a.last[d] = ts
	return nostr.Timestamp(ts)
}

// deleteRemoved asks the relay (NIP-09, by address) to delete the events
// of records removed from RAM: forgotten or compacted items, deleted
// lessons, dropped people.
func (a *Agent) deleteRemoved(ctx context.Context) error {
	gone := a.mem.Removed()
	for len(gone) > 0 {
		batch := gone[:min(len(gone), 200)]
		gone = gone[len(batch):]
		del := nostr.Event{Kind: snowclaw.KindDeletion, Tags: nostr.Tags{{"k", "30078"}}}
		stamp := int64(0)
		for _, k := range batch {
			d := k.DTag()
			del.Tags = append(del.Tags, nostr.Tag{"a", snowclaw.Address(snowclaw.KindAppData, a.pk, d)})
			stamp = max(stamp, int64(a.nextStamp(d)))
		}
		// the deletion must not be older than the last version written,
		// or that version would survive it
		del.CreatedAt = nostr.Timestamp(stamp)
		if err := del.Sign(a.sk); err != nil {
			return err
		}
		if err := a.publishOwnDeletion(ctx, &del, batch); err != nil {
			return fmt.Errorf("deleting %d removed records: %w", len(batch), err)
		}
	}
	return nil
}

// publishOwnDeletion publishes the agent's NIP-09 request for records
// it removed itself. The relay's delete hooks tell the agent of each
// event it deletes (Deleted); these must not take from RAM a record
// remembered again under the same id since it was removed.
func (a *Agent) publishOwnDeletion(ctx context.Context, del *nostr.Event, batch []memory.Key) error {
	a.mu.Lock()
	a.ownDels = make(map[string]bool, len(batch))
	for _, k := range batch {
		a.ownDels[k.DTag()] = true
	}
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.ownDels = nil
		a.mu.Unlock()
	}()
	return a.o.Publish(ctx, del)
}

// load fills RAM from the store at start (docs/agent.md#persistence): the agent's own
// records, the owner's config, group metadata and the names of the
// people it knows. Reads on the turn path never touch the store again.
func (a *Agent) load(ctx context.Context) error {
	var (
		bad  int
		own  []*nostr.Event
		gone = map[string]bool{} // versions a correction or promotion replaced
	)
	err := a.o.Query(ctx, nostr.Filter{Kinds: []int{snowclaw.KindAppData}, Authors: []string{a.pk}}, func(evt *nostr.Event) bool {
		own = append(own, evt)
		for _, id := range snowclaw.TagValues(evt, snowclaw.TagSupersedes) {
			gone[id] = true
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("loading agent memory: %w", err)
	}
	for _, raw := range own {
		evt := snowclaw.ReadEvent(raw)
		if evt.IsMemoryItem() && snowclaw.HasTag(raw, snowclaw.TagResolution) {
			a.Ruled(evt.Subject) // the owner's ruling on a conflict: not the agent's memory, and its address is not the agent's
			continue
		}
		if gone[evt.ID] {
			continue // history
		}
		rec, err := a.codec.Decode(evt)
		if err != nil {
			bad++
			a.log.Warn("agent record not loaded", "id", evt.ID, "d", evt.D, "err", err)
			continue
		}
		a.mem.Load(rec)
		a.mu.Lock()
		a.last[evt.D] = max(a.last[evt.D], int64(evt.CreatedAt))
		a.mu.Unlock()
	}
	if a.o.Owner != "" {
		err = a.o.Query(ctx, nostr.Filter{Kinds: []int{snowclaw.KindAppData}, Authors: []string{a.o.Owner}}, func(evt *nostr.Event) bool {
			a.seeAppData(snowclaw.ReadEvent(evt))
			return true
		})
		if err != nil {
			return fmt.Errorf("loading dynamic config: %w", err)
		}
	}
	err = a.o.Query(ctx, nostr.Filter{Kinds: []int{snowclaw.KindGroupMetadata}}, func(evt *nostr.Event) bool {
		a.seeGroupMetadata(snowclaw.ReadEvent(evt))
		return true
	})
	if err != nil {
		return fmt.Errorf("loading group metadata: %w", err)
	}
	a.log.Info("agent memory loaded", "people", len(a.mem.Npubs()), "groups", len(a.mem.Groups()), "items", len(a.mem.Items()), "lessons", len(a.mem.Lessons()), "unreadable", bad)
	return nil
}
