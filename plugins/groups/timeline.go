package groups

import (
	"context"
	"regexp"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// recentEvents is how far back in a group a timeline reference is looked
// for. NIP-29 has clients name events among "the last 50 events seen by
// the user in the relay"; a user who read a while ago saw older ones.
const recentEvents = 500

// maxAhead is how far ahead of the relay's clock a group event may be
// dated: a client's clock that is a little off is no attack.
const maxAhead = 10 * time.Minute

var previousRef = regexp.MustCompile(`^[0-9a-f]{8}$`)

// RejectTimeline holds every event in a group to NIP-29's timeline
// rules: no late publication ("messages published now with a timestamp
// from days or even hours ago"), unless the relay is open to receive a
// moved or forked group (Options.AcceptMoved), and no timeline reference
// (previous) to an event this relay does not have in the group. The
// relay's own keys are exempt: they date what they write now.
func (s *Groups) RejectTimeline(ctx context.Context, evt *snowclaw.Event) error {
	if evt.Group == "" || evt.GroupErr != nil || s.opts.IDs.IsSystem(evt.PubKey) {
		return nil
	}
	age := s.opts.Clock().Sub(evt.CreatedAt.Time())
	late := age > s.opts.MaxEventAge
	switch {
	case late && !s.opts.AcceptMoved:
		return snowclaw.Invalid("late publication: this group event is dated %s ago, and this relay refuses group events older than %s (NIP-29)", age.Round(time.Second), s.opts.MaxEventAge)
	case age < -maxAhead:
		return snowclaw.Invalid("group event is dated %s in the future; check your clock", (-age).Round(time.Second))
	case late:
		// a moved group's history names events older than any
		// recent window
		return nil
	}
	var refs []string
	for _, t := range evt.Tags {
		if len(t) >= 2 && t[0] == snowclaw.TagPrevious {
			refs = append(refs, t[1:]...)
		}
	}
	if len(refs) == 0 {
		return nil
	}
	for _, r := range refs {
		if !previousRef.MatchString(r) {
			return snowclaw.Invalid("timeline reference %q is not the first 8 lowercase hex characters of an event id", r)
		}
	}
	ch, err := s.opts.Store.QueryEvents(ctx, nostr.Filter{Tags: nostr.TagMap{"h": {evt.Group}}, Limit: recentEvents})
	if err != nil {
		return snowclaw.Internal("could not read group %s's recent events to check its timeline references; try again in a few seconds", evt.Group)
	}
	have := make(map[string]bool)
	for e := range ch {
		have[e.ID[:8]] = true
	}
	for _, r := range refs {
		if !have[r] {
			return snowclaw.Invalid("timeline reference %s names no recent event of group %s on this relay (NIP-29 previous)", r, evt.Group)
		}
	}
	return nil
}
