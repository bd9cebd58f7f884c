package relay

import (
	"github.com/nbd-wtf/go-nostr/nip11"
)

// SupportedNIPs is exactly what this build implements and tests; 50 is
// added when search is on. NIP-77 stays off (go-nostr's is broken).
var SupportedNIPs = []any{1, 9, 11, 29, 40, 42, 45, 70}

func (r *Relay) infoDocument() *nip11.RelayInformationDocument {
	l := r.opts.Limits
	name := r.opts.Name
	if name == "" {
		name = "snowclaw"
	}
	return &nip11.RelayInformationDocument{
		Name:          name,
		Description:   r.opts.Description,
		PubKey:        r.ids.Owner,
		Contact:       r.opts.Contact,
		Icon:          r.opts.Icon,
		SupportedNIPs: append([]any(nil), SupportedNIPs...),
		Software:      "https://github.com/snowclaw/snowclaw",
		Version:       r.opts.Version,
		Limitation: &nip11.RelayLimitationDocument{
			MaxMessageLength: int(r.maxMessage),
			MaxLimit:         l.MaxLimit,
			MaxEventTags:     l.MaxTags,
			MaxContentLength: l.MaxContentBytes,
			AuthRequired:     false, // public data is served without auth
			RestrictedWrites: true,  // groups, config and agent namespaces
		},
	}
}
