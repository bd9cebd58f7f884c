package snowclaw

// Tier is the visibility tier of a memory (docs/events.md).
type Tier string

const (
	TierPublic   Tier = "public"
	TierGroup    Tier = "group"
	TierPrivate  Tier = "private"
	TierInternal Tier = "internal"
)

// tierOf reads the tier from the event's markers, not from its snow:tier
// tag: the markers are what the relay enforces, so a tag claiming "public"
// on an encrypted event must not widen who reads it.
//
//	encrypted + p                   → private
//	encrypted nip44-group + h, no p → group (sealed with the group key)
//	encrypted, no p                 → internal
//	h                               → group
//	otherwise                       → public
//
// The more restrictive reading wins when markers are mixed: a p tag makes
// any encrypted event private, and an event whose encrypted tags do not
// all say nip44-group is internal (the agent's only). Malformed h tags
// are a group (MalformedGroup, nobody's), never public.
func tierOf(e *Event) Tier {
	if e.Encrypted {
		if len(e.P) > 0 {
			return TierPrivate
		}
		if e.GroupSealed && e.Group != "" {
			return TierGroup
		}
		return TierInternal
	}
	if e.Group != "" {
		return TierGroup
	}
	return TierPublic
}

// Person names the person an encrypted, p-tagged event (a private
// memory, the agent's record of someone) belongs to, and whether that
// claim can be trusted. Anyone can write a p tag, so the tag alone proves
// nothing: the claim holds only when the event names exactly one person
// (every p tag the same canonical hex key) and is signed by the agent
// (agentPubkey, hex; "" trusts no agent) or by that person. Every reader
// that decides whose private memory an event is — the read rule, the
// write rule, decryption for a reader, the agent's RAM, exports, the
// search index — asks this method and nothing else.
func (e *Event) Person(agentPubkey string) (string, bool) {
	if e == nil || !e.Encrypted || len(e.P) == 0 {
		return "", false
	}
	person := e.P[0]
	for _, p := range e.P[1:] {
		if p != person {
			return "", false
		}
	}
	if pk, err := ParsePubkey(person); err != nil || pk != person {
		return "", false
	}
	if e.PubKey != person && (agentPubkey == "" || e.PubKey != agentPubkey) {
		return "", false
	}
	return person, true
}
