package agent

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/privmsg"
)

// Several instances over a shared store run one agent between them: the
// instance holding the leadership (docs/scaling.md) starts it, the others
// keep it in standby (Options.Standby), dropping what they are fed. A new
// leader starts from the stored records, like a restart, and then catches
// up on the messages of the last Options.CatchUp: they refill the
// conversation buffers, and those nobody answered (the old leader died
// mid-reply, or nobody led for a few seconds) are answered now. Those
// answered already are not answered twice: a reply names its message
// (an e tag, in the clear in a group and inside the gift wrap in private).

// backlog is what a new leader catches up on.
type backlog struct {
	mu      sync.Mutex
	events  []*snowclaw.Event    // oldest first; handled before the queue
	ids     map[string]bool      // their ids: a live copy in the queue is skipped
	done    map[string]bool      // message ids a stored reply names
	seen    map[string]bool      // message ids the previous leader handled (StartAfter)
	handled func(id string) bool // whether the previous leader received an event (StartAfter)
}

// wasSeen reports whether the previous leader handled message id: it is
// replayed into the conversation buffer, and answered if it has no reply,
// but not learnt from or obeyed again.
func (b *backlog) wasSeen(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.seen[id]
}

func (b *backlog) had(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ids[id]
}

func (b *backlog) answered(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.done[id]
}

// take hands the worker the events and forgets them.
func (b *backlog) take() []*snowclaw.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	evs := b.events
	b.events = nil
	return evs
}

// StartAfter is Start for a new leader: handled tells the events the
// previous leader had received (by event id; a gift wrap's outer id), and
// so acted on; nil: none.
func (a *Agent) StartAfter(ctx context.Context, handled func(id string) bool) error {
	a.backlog.mu.Lock()
	a.backlog.handled = handled
	a.backlog.mu.Unlock()
	return a.Start(ctx)
}

// catchUp reads the messages of the last CatchUp and the replies to them,
// before the agent takes live events.
func (a *Agent) catchUp(ctx context.Context) error {
	if a.o.CatchUp <= 0 {
		return nil
	}
	since := nostr.Timestamp(a.o.Now().Add(-a.o.CatchUp).Unix())
	var msgs []*snowclaw.Event
	done := make(map[string]bool)
	chat := nostr.Filter{Kinds: []int{1, snowclaw.KindChat, 10, 11, 12, 1111}, Since: &since}
	err := a.o.Query(ctx, chat, func(raw *nostr.Event) bool {
		switch evt := snowclaw.ReadEvent(raw); {
		case evt.PubKey == a.pk:
			for _, id := range snowclaw.TagValues(raw, "e") {
				done[id] = true
			}
		case isChat(evt):
			msgs = append(msgs, evt)
		}
		return true
	})
	if err != nil {
		return err
	}
	// gift wraps are dated up to two days in the past (NIP-59): read a
	// wider window and keep the messages inside it by their own date
	wrapSince := since - 2*24*60*60
	wraps := nostr.Filter{Kinds: []int{snowclaw.KindGiftWrap}, Tags: nostr.TagMap{"p": {a.pk}}, Since: &wrapSince}
	err = a.o.Query(ctx, wraps, func(evt *nostr.Event) bool {
		pm, err := privmsg.Unwrap(ctx, evt, a.sk)
		if err != nil || nostr.Timestamp(pm.CreatedAt) < since {
			return true
		}
		if pm.From == a.pk {
			for _, id := range snowclaw.TagValues(&nostr.Event{Tags: pm.Tags}, "e") {
				done[id] = true
			}
			return true
		}
		msgs = append(msgs, snowclaw.ReadEvent(evt))
		return true
	})
	if err != nil {
		return err
	}
	slices.SortStableFunc(msgs, func(x, y *snowclaw.Event) int { return int(x.CreatedAt - y.CreatedAt) })
	ids := make(map[string]bool, len(msgs))
	for _, m := range msgs {
		ids[m.ID] = true
	}
	a.backlog.mu.Lock()
	a.backlog.events, a.backlog.ids, a.backlog.done = msgs, ids, done
	a.backlog.mu.Unlock()
	a.markSeen(ctx, msgs)
	a.fed.Add(uint64(len(msgs))) // Idle waits for them too
	if len(msgs) > 0 {
		a.log.Info("catching up on recent messages", "messages", len(msgs), "answered", len(done), "since", time.Unix(int64(since), 0).UTC())
	}
	return nil
}

// markSeen notes the messages the previous leader had received, by the
// id the agent knows them by (a private message's own id inside its wrap).
func (a *Agent) markSeen(ctx context.Context, msgs []*snowclaw.Event) {
	a.backlog.mu.Lock()
	handled := a.backlog.handled
	a.backlog.mu.Unlock()
	if handled == nil {
		return
	}
	seen := make(map[string]bool)
	for _, m := range msgs {
		if !handled(m.ID) {
			continue
		}
		id := m.ID
		if m.Kind == snowclaw.KindGiftWrap {
			pm, err := privmsg.Unwrap(ctx, m.Event, a.sk)
			if err != nil {
				continue
			}
			id = pm.ID
		}
		seen[id] = true
	}
	a.backlog.mu.Lock()
	a.backlog.seen = seen
	a.backlog.mu.Unlock()
}

// handleBacklog runs on the worker before the queue.
func (a *Agent) handleBacklog() {
	for _, evt := range a.backlog.take() {
		a.handle(evt)
	}
}

// runContext is the context replies are written under: Pause ends it.
func (a *Agent) runContext() context.Context {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.run
}

// Pause puts a started agent back in standby, when its instance stops
// leading: it stops taking events, handles what is already queued (its
// replies are given up, and the next leader answers them), and flushes
// its records. Start resumes it from the store.
func (a *Agent) Pause(ctx context.Context) error {
	if !a.started.CompareAndSwap(true, false) {
		return nil
	}
	a.standby.Store(true)
	a.mu.Lock()
	a.endRun()
	a.mu.Unlock()
	close(a.stop)
	a.done.Wait()
	a.replyWG.Wait()
	close(a.replyQ)
	err := a.flush(ctx)
	a.mu.Lock()
	a.stop = make(chan struct{})
	a.replyQ = make(chan replyJob, 64)
	a.run, a.endRun = context.WithCancel(context.Background())
	a.mu.Unlock()
	a.backlog.mu.Lock()
	a.backlog.ids, a.backlog.done, a.backlog.seen = nil, nil, nil
	a.backlog.mu.Unlock()
	return err
}

// Leading reports whether the agent runs (it is not in standby).
func (a *Agent) Leading() bool { return a.started.Load() && !a.standby.Load() }
