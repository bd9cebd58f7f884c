package policies

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// Limits bound what one event or one filter may cost the relay. Zero values
// mean "no limit" for counts; New callers should start from DefaultLimits.
// The toml tags are the keys of the config file's [limits] table, which
// cmd/snowclaw decodes into this very type rather than a copy of it.
type Limits struct {
	MaxEventBytes    int   `toml:"max_event_bytes"`     // serialized event
	MaxContentBytes  int   `toml:"max_content_bytes"`   // content field
	MaxTags          int   `toml:"max_tags"`            // number of tags
	MaxTagValueBytes int   `toml:"max_tag_value_bytes"` // one tag element
	MaxFutureSeconds int64 `toml:"max_future_seconds"`  // created_at may be this far ahead of the clock
	MaxFilterValues  int   `toml:"max_filter_values"`   // ids + authors + kinds + tag values of one filter
	MaxLimit         int   `toml:"max_limit"`           // a larger limit is clamped to this
	DefaultLimit     int   `toml:"default_limit"`       // limit when the filter gives none

	// Per connection: a REQ or COUNT with more filters, a subscription
	// id longer than MaxSubIDLength, or one subscription more than
	// MaxSubscriptions open at once is refused with CLOSED.
	MaxFilters       int `toml:"max_filters"`
	MaxSubscriptions int `toml:"max_subscriptions"`
	MaxSubIDLength   int `toml:"max_subid_length"`
}

// DefaultLimits are the limits of a relay with no configuration.
func DefaultLimits() Limits {
	return Limits{
		MaxEventBytes:    128 * 1024,
		MaxContentBytes:  64 * 1024,
		MaxTags:          2000,
		MaxTagValueBytes: 4096,
		MaxFutureSeconds: 900,
		MaxFilterValues:  1000,
		MaxLimit:         500,
		DefaultLimit:     100,
		MaxFilters:       10,
		MaxSubscriptions: 50,
		MaxSubIDLength:   64,
	}
}

// RejectEvent enforces size and time limits on one event, by the wall
// clock.
func (l Limits) RejectEvent(_ context.Context, evt *snowclaw.Event) error {
	return l.RejectEventAt(evt, nostr.Now())
}

// RejectEventAt is RejectEvent with now read from the caller's clock.
func (l Limits) RejectEventAt(evt *snowclaw.Event, now nostr.Timestamp) error {
	if l.MaxContentBytes > 0 && len(evt.Content) > l.MaxContentBytes {
		return snowclaw.Invalid("content is %d bytes; this relay accepts at most %d", len(evt.Content), l.MaxContentBytes)
	}
	if l.MaxTags > 0 && len(evt.Tags) > l.MaxTags {
		return snowclaw.Invalid("event has %d tags; this relay accepts at most %d", len(evt.Tags), l.MaxTags)
	}
	size := len(evt.Content) + 200
	for _, t := range evt.Tags {
		for _, v := range t {
			if l.MaxTagValueBytes > 0 && len(v) > l.MaxTagValueBytes {
				return snowclaw.Invalid("a tag value is %d bytes; this relay accepts at most %d", len(v), l.MaxTagValueBytes)
			}
			size += len(v) + 3
		}
	}
	if l.MaxEventBytes > 0 && size > l.MaxEventBytes {
		return snowclaw.Invalid("event is about %d bytes; this relay accepts at most %d", size, l.MaxEventBytes)
	}
	if l.MaxFutureSeconds > 0 && int64(evt.CreatedAt) > int64(now)+l.MaxFutureSeconds {
		return snowclaw.Invalid("created_at is more than %d seconds in the future; check your clock", l.MaxFutureSeconds)
	}
	if evt.Expired(now) {
		return snowclaw.Invalid("event has already expired (NIP-40)")
	}
	return nil
}

// RejectFilter refuses filters too big to answer cheaply.
func (l Limits) RejectFilter(_ context.Context, f snowclaw.Filter) error {
	n := len(f.IDs) + len(f.Authors) + len(f.Kinds)
	for k, vs := range f.Tags {
		if len(k) != 1 {
			return snowclaw.Invalid("tag filter %q: tag names in filters are single letters, written #x", k)
		}
		n += len(vs)
	}
	if l.MaxFilterValues > 0 && n > l.MaxFilterValues {
		return snowclaw.Invalid("filter has %d values; this relay accepts at most %d per filter", n, l.MaxFilterValues)
	}
	for _, id := range f.IDs {
		if len(id) != 64 {
			return snowclaw.Invalid("%q is not an event id (64 hex characters)", id)
		}
	}
	for _, a := range f.Authors {
		if len(a) != 64 {
			return snowclaw.Invalid("%q is not a public key (64 hex characters)", a)
		}
	}
	if f.Limit < 0 {
		return snowclaw.Invalid("limit must not be negative")
	}
	return nil
}

// ClampLimit returns the limit a query really runs with.
func (l Limits) ClampLimit(f nostr.Filter) int {
	switch {
	case f.Limit <= 0:
		return l.DefaultLimit
	case l.MaxLimit > 0 && f.Limit > l.MaxLimit:
		return l.MaxLimit
	}
	return f.Limit
}
