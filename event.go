package snowclaw

import (
	"slices"
	"strconv"

	"github.com/nbd-wtf/go-nostr"
)

// Event is a nostr event read once: the event itself and what its tags
// say to every rule the relay applies — its group, its d tag's namespace,
// its encryption markers, its tier, the people it names and its NIP-40
// expiration. ReadEvent makes it at the edge where an event arrives (the
// websocket, the change log of a shared store, a read of the store, an
// event the relay or its agent publish), and everything below the edge —
// the relay's hooks, the write and read rules, the groups, the index, the
// agent — reads these fields instead of the tags, so no two of them can
// read one event differently. Nothing changes it after ReadEvent: an
// event with other tags (a group memory opened in plain) is read anew.
type Event struct {
	*nostr.Event

	// Group is the group of its only h tag; "" with none, and
	// MalformedGroup when GroupErr refuses the h tags, so that a rule
	// scoping by Group never places such an event in a real group.
	Group string
	// GroupErr says why the h tags name no group (ErrMultipleGroups,
	// ErrEmptyGroup): the write rule refuses such events.
	GroupErr error

	// D is the value of its first d tag with a value: go-nostr's GetD,
	// which NIP-01's address and every store read it by; "" when it has
	// none.
	D string
	// Namespace classifies D for kind 30078 (NamespaceNone for any other
	// kind), and Subject is the rest of D after the namespace prefix: the
	// npub, group id or topic (ClassifyD).
	Namespace Namespace
	Subject   string

	// Encrypted: it carries an ["encrypted", …] tag of any form.
	Encrypted bool
	// GroupSealed: every encrypted tag says nip44-group (sealed with a
	// group key). MentionsGroupSeal: at least one does, so the write
	// rule judges its shape (GroupSealOf) whatever the others say.
	GroupSealed       bool
	MentionsGroupSeal bool

	// Tier is the tier its markers make it (tier.go), never what a
	// snow:tier tag claims.
	Tier Tier

	// P are the values of its p tags, in order. Shared by every reader:
	// never modified.
	P []string

	// Expiration is its NIP-40 expiration when Expires: the first
	// expiration tag with a value, read as a decimal timestamp (a value
	// that does not parse is no expiration).
	Expiration nostr.Timestamp
	Expires    bool

	hs            []string // every h tag's value, "" for a valueless one
	pTags         int      // how many p tags, of any form
	encryptedTags int      // how many encrypted tags, of any form
}

// ReadEvent reads evt's tags once into an Event: the one reading of the
// h, d, p, encrypted and expiration tags. nil reads as nil.
func ReadEvent(evt *nostr.Event) *Event {
	if evt == nil {
		return nil
	}
	e := &Event{Event: evt}
	e.D = evt.Tags.GetD()
	haveExp, groupMarks := false, 0
	for _, t := range evt.Tags {
		if len(t) == 0 {
			continue
		}
		switch t[0] {
		case "h":
			v := ""
			if len(t) >= 2 {
				v = t[1]
			}
			e.hs = append(e.hs, v)
		case "p":
			e.pTags++
			if len(t) >= 2 {
				e.P = append(e.P, t[1])
			}
		case "encrypted":
			e.encryptedTags++
			if len(t) >= 2 && t[1] == EncryptionGroup {
				groupMarks++
			}
		case "expiration":
			if !haveExp && len(t) >= 2 {
				haveExp = true
				if n, err := strconv.ParseInt(t[1], 10, 64); err == nil {
					e.Expiration, e.Expires = nostr.Timestamp(n), true
				}
			}
		}
	}
	e.Group, e.GroupErr = groupOf(e.hs)
	if e.GroupErr != nil {
		e.Group = MalformedGroup
	}
	if evt.Kind == KindAppData {
		e.Namespace, e.Subject = ClassifyD(e.D)
	}
	e.Encrypted = e.encryptedTags > 0
	e.GroupSealed = e.Encrypted && groupMarks == e.encryptedTags
	e.MentionsGroupSeal = groupMarks > 0
	e.Tier = tierOf(e)
	return e
}

// Expired reports whether its NIP-40 expiration is at or before now.
func (e *Event) Expired(now nostr.Timestamp) bool { return e.Expires && e.Expiration <= now }

// Names reports whether one of its p tags names pk ("" names nobody).
func (e *Event) Names(pk string) bool {
	return pk != "" && slices.Contains(e.P, pk)
}
