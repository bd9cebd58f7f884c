package groups

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/relay/store"
)

// snapshot is a group's state as its relay-signed 39000–39002 last said.
type snapshot struct {
	at      nostr.Timestamp // the oldest of the three: state as of then
	meta    *nostr.Event
	admins  *nostr.Event
	members *nostr.Event
}

// loadSnapshots reads the newest metadata the relay signed per group.
//
// Replaying moderation events alone cannot order events of the same
// second (a put-user and a remove-user sent together by a bot), but the
// relay published a snapshot after each of them in the order it really
// applied them. Load therefore takes membership, roles and flags from the
// snapshot and replays on top of it only the events newer than it.
func (s *Groups) loadSnapshots(ctx context.Context, gid string) (map[string]*snapshot, error) {
	out := make(map[string]*snapshot)
	f := nostr.Filter{
		Kinds:   []int{snowclaw.KindGroupMetadata, snowclaw.KindGroupAdmins, snowclaw.KindGroupMembers},
		Authors: []string{s.opts.IDs.Relay},
	}
	if gid != "" {
		f.Tags = nostr.TagMap{"d": {gid}}
	}
	err := store.Each(ctx, s.opts.Store, f, func(evt *nostr.Event) bool {
		gid := evt.Tags.GetD()
		sn := out[gid]
		if sn == nil {
			sn = &snapshot{}
			out[gid] = sn
		}
		slot := map[int]**nostr.Event{
			snowclaw.KindGroupMetadata: &sn.meta,
			snowclaw.KindGroupAdmins:   &sn.admins,
			snowclaw.KindGroupMembers:  &sn.members,
		}[evt.Kind]
		if *slot == nil || (*slot).CreatedAt < evt.CreatedAt {
			*slot = evt
		}
		return true
	})
	for gid, sn := range out {
		if sn.meta == nil || sn.admins == nil || sn.members == nil {
			delete(out, gid)
			continue
		}
		sn.at = min(sn.meta.CreatedAt, sn.admins.CreatedAt, sn.members.CreatedAt)
	}
	return out, err
}

// restore overwrites g's membership, roles and metadata with the snapshot.
func (g *Group) restore(sn *snapshot) {
	g.Name, g.Picture, g.About = g.ID, "", ""
	g.Private, g.Hidden, g.Closed = false, false, false
	g.applyMetadataTags(sn.meta.Tags)
	g.Members = make(map[string][]string)
	for _, t := range sn.members.Tags {
		if len(t) >= 2 && t[0] == "p" {
			g.Members[t[1]] = nil
		}
	}
	for _, t := range sn.admins.Tags {
		if len(t) >= 3 && t[0] == "p" {
			if _, ok := g.Members[t[1]]; ok {
				g.Members[t[1]] = append([]string(nil), t[2:]...)
			}
		}
	}
}
