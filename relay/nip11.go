package relay

import (
	"slices"

	"github.com/snowclaw/snowclaw/policies"
)

// supportedNIPs is exactly what this build implements and tests: 98 is
// the HTTP API's and MCP's auth, 17 the agent's private messages (gift
// wraps served to their recipient only). 50 is added while search is on
// (UseSearch). NIP-77 stays off (go-nostr's is broken).
var supportedNIPs = []int{1, 9, 11, 17, 29, 40, 42, 45, 70, 98}

// information is the NIP-11 document. It is our own type rather than
// go-nostr's: that one lacks "self", default_limit and the created_at
// limits, and writes empty icon and banner keys.
type information struct {
	Name           string      `json:"name"`
	Description    string      `json:"description,omitempty"`
	PubKey         string      `json:"pubkey,omitempty"`
	Self           string      `json:"self"` // the relay's key, which signs group metadata
	Contact        string      `json:"contact,omitempty"`
	SupportedNIPs  []int       `json:"supported_nips"`
	Software       string      `json:"software"`
	Version        string      `json:"version"`
	Icon           string      `json:"icon,omitempty"`
	Banner         string      `json:"banner,omitempty"`
	PostingPolicy  string      `json:"posting_policy,omitempty"`
	PrivacyPolicy  string      `json:"privacy_policy,omitempty"`
	TermsOfService string      `json:"terms_of_service,omitempty"`
	Limitation     *limitation `json:"limitation"`
	NIP29          nip29Info   `json:"nip29"`
}

// nip29Info is NIP-29's "Relay support detection": the groups plugin
// implements subgroups (parent and child tags, their rules).
type nip29Info struct {
	Subgroups bool `json:"subgroups"`
}

// limitation advertises the limits the relay enforces, each read from
// the Options the enforcement reads: change one and both follow.
type limitation struct {
	MaxMessageLength int `json:"max_message_length"`
	MaxSubscriptions int `json:"max_subscriptions"`
	MaxFilters       int `json:"max_filters"`
	MaxLimit         int `json:"max_limit"`
	DefaultLimit     int `json:"default_limit"`
	MaxSubidLength   int `json:"max_subid_length"`
	MaxEventTags     int `json:"max_event_tags,omitempty"`
	MaxContentLength int `json:"max_content_length,omitempty"`
	// CreatedAtUpperLimit is how far ahead of the clock created_at may
	// be, in seconds. There is no lower limit: old events are accepted.
	CreatedAtUpperLimit int64 `json:"created_at_upper_limit,omitempty"`
	AuthRequired        bool  `json:"auth_required"`    // public data is served without auth
	PaymentRequired     bool  `json:"payment_required"` // never
	RestrictedWrites    bool  `json:"restricted_writes"`
}

// withConnDefaults fills the per-connection limits a caller left at
// zero: unlike the event limits they have no "unlimited".
func withConnDefaults(l policies.Limits) policies.Limits {
	d := policies.DefaultLimits()
	if l.MaxFilters <= 0 {
		l.MaxFilters = d.MaxFilters
	}
	if l.MaxSubscriptions <= 0 {
		l.MaxSubscriptions = d.MaxSubscriptions
	}
	if l.MaxSubIDLength <= 0 {
		l.MaxSubIDLength = d.MaxSubIDLength
	}
	return l
}

func (r *Relay) information() information {
	l := r.opts.Limits
	name := r.opts.Name
	if name == "" {
		name = "snowclaw"
	}
	nips := slices.Clone(supportedNIPs)
	if r.search != nil {
		nips = append(nips, 50)
	}
	slices.Sort(nips)
	return information{
		Name:           name,
		Description:    r.opts.Description,
		PubKey:         r.ids.Owner,
		Self:           r.ids.Relay,
		Contact:        r.opts.Contact,
		SupportedNIPs:  nips,
		Software:       "https://github.com/snowclaw/snowclaw",
		Version:        r.opts.Version,
		Icon:           r.opts.Icon,
		Banner:         r.opts.Banner,
		PostingPolicy:  r.opts.PostingPolicy,
		PrivacyPolicy:  r.opts.PrivacyPolicy,
		TermsOfService: r.opts.TermsOfService,
		Limitation: &limitation{
			MaxMessageLength:    int(r.maxMessage),
			MaxSubscriptions:    l.MaxSubscriptions,
			MaxFilters:          l.MaxFilters,
			MaxLimit:            l.MaxLimit,
			DefaultLimit:        l.DefaultLimit,
			MaxSubidLength:      l.MaxSubIDLength,
			MaxEventTags:        l.MaxTags,
			MaxContentLength:    l.MaxContentBytes,
			CreatedAtUpperLimit: l.MaxFutureSeconds,
			RestrictedWrites:    true, // groups, config and agent namespaces
		},
		NIP29: nip29Info{Subgroups: true},
	}
}
