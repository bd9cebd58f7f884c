package snowclaw

import "github.com/nbd-wtf/go-nostr"

// Tier is the visibility tier of a memory (DESIGN.md §2).
type Tier string

const (
	TierPublic   Tier = "public"
	TierGroup    Tier = "group"
	TierPrivate  Tier = "private"
	TierInternal Tier = "internal"
)

// TierOf reads the tier from the event's markers, not from its snow:tier
// tag: the markers are what the relay enforces, so a tag claiming "public"
// on an encrypted event must not widen who reads it.
//
//	encrypted + p  → private
//	encrypted, no p → internal
//	h              → group
//	otherwise      → public
func TierOf(evt *nostr.Event) Tier {
	if IsEncrypted(evt) {
		if len(TagValues(evt, "p")) > 0 {
			return TierPrivate
		}
		return TierInternal
	}
	if GroupOf(evt) != "" {
		return TierGroup
	}
	return TierPublic
}

// IsEncrypted reports whether the event is marked ["encrypted", ...].
func IsEncrypted(evt *nostr.Event) bool { return HasTag(evt, "encrypted") }
