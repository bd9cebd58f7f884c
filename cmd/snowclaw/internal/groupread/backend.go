package groupread

import (
	"context"
	"slices"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// Backend is a memory backend (the relay's HTTP API as one key sees it)
// whose group-sealed memories come opened with the member's own keys.
// The relay serves them to members with their text withheld ("encrypted":
// true): a member reads them the way docs/group-encryption.md describes,
// with the keys the agent sent them, never through the relay's copy.
type Backend struct {
	snowclaw.MemoryBackend
	Keys *Keyring
	// Fetch reads the sealed events of views that come without them (a
	// listing, a history); nil leaves those closed.
	Fetch Fetch
}

// Search opens the group memories among the hits.
func (b Backend) Search(ctx context.Context, req snowclaw.SearchRequest) (snowclaw.SearchResponse, error) {
	resp, err := b.MemoryBackend.Search(ctx, req)
	if err != nil {
		return resp, err
	}
	var views []*snowclaw.MemoryView
	known := map[string]*nostr.Event{}
	for i := range resp.Results {
		if h := &resp.Results[i]; h.Memory != nil && h.Event != nil {
			views = append(views, h.Memory)
			known[h.Event.ID] = h.Event
		}
	}
	b.open(ctx, views, known)
	return resp, nil
}

// List opens the group memories listed.
func (b Backend) List(ctx context.Context, req snowclaw.ListRequest) ([]snowclaw.MemoryView, error) {
	list, err := b.MemoryBackend.List(ctx, req)
	if err != nil {
		return list, err
	}
	views := make([]*snowclaw.MemoryView, len(list))
	for i := range list {
		views[i] = &list[i]
	}
	b.open(ctx, views, nil)
	return list, nil
}

// Get opens a group memory and its versions.
func (b Backend) Get(ctx context.Context, id string) (snowclaw.MemoryDetail, error) {
	d, err := b.MemoryBackend.Get(ctx, id)
	if err != nil {
		return d, err
	}
	views := []*snowclaw.MemoryView{&d.Memory}
	for i := range d.History {
		views = append(views, &d.History[i])
	}
	for i := range d.SupersededBy {
		views = append(views, &d.SupersededBy[i])
	}
	known := map[string]*nostr.Event{}
	if d.Event != nil {
		known[d.Event.ID] = d.Event
	}
	b.open(ctx, views, known)
	return d, nil
}

// sealed: a group memory whose text the relay withheld.
func sealed(mv *snowclaw.MemoryView) bool {
	return mv.Encrypted && mv.Tier == snowclaw.TierGroup
}

// open fills in the text of the sealed views, reading the events the
// caller did not have in one request per 500.
func (b Backend) open(ctx context.Context, views []*snowclaw.MemoryView, known map[string]*nostr.Event) {
	if known == nil {
		known = map[string]*nostr.Event{}
	}
	var need []string
	for _, mv := range views {
		if sealed(mv) && known[mv.ID] == nil && !slices.Contains(need, mv.ID) {
			need = append(need, mv.ID)
		}
	}
	for chunk := range slices.Chunk(need, 500) {
		if b.Fetch == nil {
			break
		}
		evs, err := b.Fetch(ctx, nostr.Filter{IDs: chunk, Limit: len(chunk)})
		if err != nil {
			break // they stay closed, as the relay sent them
		}
		for _, evt := range evs {
			if slices.Contains(chunk, evt.ID) && evt.CheckID() {
				known[evt.ID] = evt
			}
		}
	}
	for _, mv := range views {
		if evt := known[mv.ID]; evt != nil && sealed(mv) {
			b.Keys.Fill(ctx, mv, evt)
		}
	}
}

// Fill opens evt, the sealed event of view mv, into mv's text; false
// when the member holds no key that opens it (mv is left as it was).
func (k *Keyring) Fill(ctx context.Context, mv *snowclaw.MemoryView, evt *nostr.Event) bool {
	if evt.ID != mv.ID {
		return false
	}
	plain, err := k.Open(ctx, snowclaw.ReadEvent(evt))
	if err != nil {
		return false
	}
	m := snowclaw.DecodeMemory(plain)
	mv.Text, mv.Detail, mv.Context, mv.Encrypted = m.Summary, m.Detail, m.Context, false
	return true
}
