package relay

import (
	"context"
	"sync"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/relay/store"
)

// tombstones remember what was deleted, so that "deleted stays deleted"
// costs a map lookup per incoming event instead of a store query. They
// are derived from the stored kind 5 and 9005 events: loaded at start,
// extended as deletions are stored.
type tombstones struct {
	mu    sync.RWMutex
	ids   map[string][]tombstone     // event id → who deleted it
	addrs map[string]nostr.Timestamp // kind:pubkey:d → newest deletion date
}

// tombstone is one deletion of an event id: by its author (kind 5) or by a
// group moderator (9005, scoped to the group).
type tombstone struct {
	author string
	group  string
}

func newTombstones() *tombstones {
	return &tombstones{ids: make(map[string][]tombstone), addrs: make(map[string]nostr.Timestamp)}
}

func (t *tombstones) load(ctx context.Context, r *Relay) error {
	return store.Each(ctx, r.store, nostr.Filter{Kinds: []int{snowclaw.KindDeletion, snowclaw.KindDeleteEvent}}, func(evt *nostr.Event) bool {
		t.record(snowclaw.ReadEvent(evt))
		return true
	})
}

// record notes a stored deletion request.
func (t *tombstones) record(evt *snowclaw.Event) {
	if evt.Kind != snowclaw.KindDeletion && evt.Kind != snowclaw.KindDeleteEvent {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	mark := tombstone{author: evt.PubKey}
	if evt.Kind == snowclaw.KindDeleteEvent {
		mark = tombstone{group: evt.Group}
	}
	for _, id := range snowclaw.TagValues(evt.Event, "e") {
		t.ids[id] = append(t.ids[id], mark)
	}
	if evt.Kind == snowclaw.KindDeletion {
		for _, a := range snowclaw.TagValues(evt.Event, "a") {
			if _, pk, _, err := snowclaw.ParseAddress(a); err == nil && pk == evt.PubKey && evt.CreatedAt > t.addrs[a] {
				t.addrs[a] = evt.CreatedAt
			}
		}
	}
}

// refusal says why evt must stay deleted, or is nil.
func (t *tombstones) refusal(evt *snowclaw.Event) error {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, m := range t.ids[evt.ID] {
		switch {
		case m.author != "" && m.author == evt.PubKey:
			return snowclaw.Blocked("this event was deleted by its author (NIP-09) and stays deleted")
		case m.group != "" && m.group == evt.Group:
			return snowclaw.Blocked("this event was deleted by a group moderator and stays deleted")
		}
	}
	if nostr.IsReplaceableKind(evt.Kind) || nostr.IsAddressableKind(evt.Kind) {
		if at, ok := t.addrs[address(evt)]; ok && at >= evt.CreatedAt {
			return snowclaw.Blocked("this address was deleted by its author (NIP-09) at or after this version's created_at; publish a newer version to recreate it")
		}
	}
	return nil
}
