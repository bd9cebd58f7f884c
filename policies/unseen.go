package policies

import "github.com/snowclaw/snowclaw"

// UnseenGroup is the one refusal for someone who may not learn whether
// group g exists: it does not exist, or it is hidden (or private, for a
// read) and they are not a member. Writes, REQ, COUNT, join requests and
// moderation all answer with these words, so that comparing the answers
// for a real and a made-up id tells nothing. An anonymous reader is asked
// to authenticate, in the same words whether or not the group exists.
func UnseenGroup(g, reader string) error {
	if reader == "" {
		return snowclaw.AuthRequired("group %s does not exist or is for members only; authenticate with NIP-42 if you are a member", g)
	}
	return snowclaw.Restricted("group %s does not exist or is for members only", g)
}

// MayKnowGroup is the rule for who may learn that a group exists: anyone
// when it is not hidden, else its members, the owner and the relay's own
// keys. Nobody "knows" a missing group, so that a missing and a hidden
// one look alike; whoever may not know gets UnseenGroup. The groups
// plugin calls it under its own lock, hence the plain arguments.
func MayKnowGroup(ids Identities, info GroupInfo, exists, member bool, pk string) bool {
	if !exists {
		return false
	}
	return !info.Hidden || member || ids.IsSystem(pk) || (pk != "" && pk == ids.Owner)
}

func seesGroup(groups GroupView, ids Identities, g, pk string) bool {
	info, exists := groups.GroupInfo(g)
	return MayKnowGroup(ids, info, exists, groups.IsMember(g, pk), pk)
}
