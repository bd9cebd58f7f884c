package snowclaw

import (
	"strings"

	"github.com/nbd-wtf/go-nostr"
)

// d-tag prefixes of kind 30078 (docs/events.md).
const (
	PrefixConfig      = "snowclaw:config:"
	PrefixMemory      = "snowclaw:memory:"
	PrefixMemoryNpub  = "snowclaw:memory:npub:"
	PrefixMemoryGroup = "snowclaw:memory:group:"
	PrefixMemoryItem  = "snow:memory:"
	DTagConfigGlobal  = "snowclaw:config:global"
	PrefixConfigGroup = "snowclaw:config:group:"
	PrefixConfigNpub  = "snowclaw:config:npub:"
	// PrefixGroupKey names the agent's store of one group's keys
	// (docs/group-encryption.md): sealed to the agent itself, no h tag.
	PrefixGroupKey = "snowclaw:groupkey:"
)

// Namespace classifies the d tag of a kind 30078 event.
type Namespace int

const (
	NamespaceNone        Namespace = iota // not a kind 30078 event, or an unknown d tag
	NamespaceConfig                       // snowclaw:config:*      (owner only)
	NamespaceMemoryNpub                   // snowclaw:memory:npub:* (agent only)
	NamespaceMemoryGroup                  // snowclaw:memory:group:* (agent only)
	NamespaceMemoryOther                  // snowclaw:memory:<other> (agent only)
	NamespaceMemoryItem                   // snow:memory:<topic>    (tier rules)
	NamespaceGroupKey                     // snowclaw:groupkey:<group> (agent only, read and write)
)

func (n Namespace) String() string {
	switch n {
	case NamespaceConfig:
		return "config"
	case NamespaceMemoryNpub:
		return "memory:npub"
	case NamespaceMemoryGroup:
		return "memory:group"
	case NamespaceMemoryOther:
		return "memory"
	case NamespaceMemoryItem:
		return "memory item"
	case NamespaceGroupKey:
		return "group key"
	}
	return "none"
}

// ClassifyD returns the namespace of a d tag value and the rest of it after
// the namespace prefix (the npub, group id or topic).
func ClassifyD(d string) (Namespace, string) {
	switch {
	case strings.HasPrefix(d, PrefixConfig):
		return NamespaceConfig, strings.TrimPrefix(d, PrefixConfig)
	case strings.HasPrefix(d, PrefixMemoryNpub):
		return NamespaceMemoryNpub, strings.TrimPrefix(d, PrefixMemoryNpub)
	case strings.HasPrefix(d, PrefixMemoryGroup):
		return NamespaceMemoryGroup, strings.TrimPrefix(d, PrefixMemoryGroup)
	case strings.HasPrefix(d, PrefixMemory):
		return NamespaceMemoryOther, strings.TrimPrefix(d, PrefixMemory)
	case strings.HasPrefix(d, PrefixMemoryItem):
		return NamespaceMemoryItem, strings.TrimPrefix(d, PrefixMemoryItem)
	case strings.HasPrefix(d, PrefixGroupKey):
		return NamespaceGroupKey, strings.TrimPrefix(d, PrefixGroupKey)
	}
	return NamespaceNone, d
}

// IsMemoryItem reports whether the event is a memory item: kind 30078
// with a d tag snow:memory:<topic>.
func (e *Event) IsMemoryItem() bool { return e.Namespace == NamespaceMemoryItem }

// HasTag reports whether the event carries a tag with this exact key (and
// any or no value), e.g. ["encrypted","nip44"] or ["private"].
func HasTag(evt *nostr.Event, key string) bool {
	for _, t := range evt.Tags {
		if len(t) >= 1 && t[0] == key {
			return true
		}
	}
	return false
}

// TagValues returns the values (second elements) of every tag named key.
func TagValues(evt *nostr.Event, key string) []string {
	var out []string
	for _, t := range evt.Tags {
		if len(t) >= 2 && t[0] == key {
			out = append(out, t[1])
		}
	}
	return out
}

// TagResolution marks a memory the agent signed to settle a conflict on
// the owner's ruling (["snow:resolution", topic]); it is not one of the
// agent's own items.
const TagResolution = "snow:resolution"
