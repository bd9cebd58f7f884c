package policies

import (
	"slices"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// CheckFilter decides, before any query runs, whether a filter asks for data
// the reader clearly cannot have. Results are filtered event by event
// anyway (CanRead); this only exists so that clients learn to authenticate
// (auth-required:) or that they are not members (restricted:) instead of
// getting a silently empty answer.
func (v *Visibility) CheckFilter(reader string, f nostr.Filter) error {
	for _, g := range f.Tags["h"] {
		info, exists := v.Groups.GroupInfo(g)
		if exists && !info.Private && !info.Hidden && !asksForMemories(f) {
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
