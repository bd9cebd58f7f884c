package groups

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/relay"
	"github.com/snowclaw/snowclaw/relay/store"
)

// The plugin's life, in order: New; Load (reads the store, publishes
// nothing); Init (the relay's publish and delete paths); its hooks in
// the relay's lists (the node's wire: RejectEvent among the write rules,
// OnEventSaved first among the saved hooks); Start, once the relay is
// wired and, over a shared store, follows the other instances; Close.

// Init binds the plugin to the relay it publishes its metadata and
// answers through and deletes with.
func (s *Groups) Init(r *relay.Relay) { s.Wire(r.Publish, r.Delete) }

// Wire is Init with the relay's paths as functions: publish stores and
// broadcasts an event through every hook, del removes one through every
// delete hook.
func (s *Groups) Wire(publish, del func(ctx context.Context, evt *nostr.Event) error) {
	s.publish, s.del = publish, del
}

// Start finishes what a stop cut short and keeps the metadata in line
// from then on: a delete-group whose events are still stored is carried
// out again, and every group's stored metadata is checked against its
// state (a crash between a change and its metadata, a deleted 39002,
// metadata an older release dated ahead of the clock, a group that no
// longer exists) and rewritten where it differs, in the background.
func (s *Groups) Start(ctx context.Context) {
	s.mu.RLock()
	var unfinished []string
	for gid := range s.deleted {
		if s.groups[gid] == nil {
			unfinished = append(unfinished, gid)
		}
	}
	due := make(map[string]bool, len(s.groups))
	for gid := range s.groups {
		due[gid] = true
	}
	s.mu.RUnlock()
	for _, gid := range unfinished {
		s.log.Info("finishing the deletion of a group", "group", gid)
		s.deleteGroup(ctx, gid, "")
	}
	err := store.Each(ctx, s.opts.Store, nostr.Filter{Kinds: metadataKinds, Authors: []string{s.opts.IDs.Relay}}, func(evt *nostr.Event) bool {
		due[evt.Tags.GetD()] = true
		return true
	})
	if err != nil {
		s.log.Error("listing the groups' metadata", "err", err)
	}
	s.meta.mu.Lock()
	for gid := range due {
		if gid != "" {
			s.meta.markLocked(gid)
		}
	}
	s.meta.mu.Unlock()
	s.meta.start(context.WithoutCancel(ctx))
	s.meta.poke()
}

// Flush writes the metadata that is due now, waiting for the next second
// where it must.
func (s *Groups) Flush(ctx context.Context) { s.meta.Flush(ctx) }

// Close stops keeping the metadata, after writing what is due. Call it
// before the relay stops taking writes.
func (s *Groups) Close(ctx context.Context) { s.meta.close(ctx) }
