package snowclaw

import "github.com/nbd-wtf/go-nostr"

// TagLearntFrom names the person a memory was learnt from
// (["snow:learnt-from", <hex pubkey>]): who said it in the conversation
// the agent learnt it from, or who asked it to be remembered. It is
// provenance, not authorship: the signer is the agent, and snow:source
// is the agent too. Two versions of one memory learnt from different
// people are a contradiction the conflict dashboard shows
// (docs/api.md#get-apiv1conflictstopic).
const TagLearntFrom = "snow:learnt-from"

// LearntFrom is the hex key of the person evt says it was learnt from,
// or "" when it names none, names something that is not a key, or names
// two different people (whom to credit is then unknown).
func LearntFrom(evt *nostr.Event) string {
	who := ""
	for _, v := range TagValues(evt, TagLearntFrom) {
		pk, err := ParsePubkey(v)
		if err != nil || who != "" && who != pk {
			return ""
		}
		who = pk
	}
	return who
}
