package policies

import (
	"context"
	"slices"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// RejectFilter is CheckFilter as a relay hook, for the reader ctx
// carries (ReaderOf).
func (v *Visibility) RejectFilter(ctx context.Context, f snowclaw.Filter) error {
	return v.CheckFilter(ReaderOf(ctx), f)
}

// CheckFilter decides, before any query runs, whether a filter asks for data
// the reader clearly cannot have. Results are filtered event by event
// anyway (CanRead); this only exists so that clients learn to authenticate
// (auth-required:) or that they are not members (restricted:) instead of
// getting a silently empty answer.
//
// A NIP-50 search asks through its extensions as well as its tags: group:x
// narrows to a group as ["h", x] does, and tier:group, tier:private and
// tier:internal to scoped memories. The rule reads the one parse the
// search engine gets (snowclaw.ReadFilter), so the two cannot disagree on
// what a query asks for.
func (v *Visibility) CheckFilter(reader string, f snowclaw.Filter) error {
	sq := f.Query()
	groups := f.Tags["h"]
	if len(sq.Groups) > 0 {
		groups = append(slices.Clone(groups), sq.Groups...)
	}
	memories := asksForMemories(f.Filter) || slices.Contains(sq.Tiers, string(snowclaw.TierGroup))
	for _, g := range groups {
		info, exists := v.Groups.GroupInfo(g)
		if exists && !info.Private && !info.Hidden && !memories {
			continue
		}
		if v.Groups.IsMember(g, reader) || v.IDs.IsSystem(reader) {
			continue
		}
		if !seesGroup(v.Groups, v.IDs, g, reader) {
			return UnseenGroup(g, reader)
		}
		if reader == "" {
			return snowclaw.AuthRequired("group %s is readable by its members only; authenticate with NIP-42", g)
		}
		return snowclaw.Restricted("you are not a member of group %s", g)
	}
	if slices.Contains(f.Kinds, snowclaw.KindGiftWrap) || slices.Contains(f.Kinds, snowclaw.KindLegacyDM) {
		if reader == "" {
			return snowclaw.AuthRequired("direct messages and gift wraps are served to their recipients only; authenticate with NIP-42")
		}
		if ps := f.Tags["p"]; len(ps) > 0 && !slices.Contains(ps, reader) && !slices.Contains(f.Authors, reader) {
			return snowclaw.Restricted("gift wraps are only served to their recipient")
		}
	}
	if reader == "" {
		if ts := sq.ScopedTiers(); len(ts) > 0 {
			return snowclaw.AuthRequired("tier:%s memories are scoped to their readers; authenticate with NIP-42", ts[0])
		}
		for _, d := range f.Tags["d"] {
			if strings.HasPrefix(d, "snowclaw:") {
				return snowclaw.AuthRequired("snowclaw config and agent records are scoped; authenticate with NIP-42")
			}
		}
	}
	return nil
}

func asksForMemories(f nostr.Filter) bool {
	return slices.Contains(f.Kinds, snowclaw.KindAppData)
}
