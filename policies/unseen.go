package policies

import "fmt"

// UnseenGroup is the one refusal for someone who may not learn whether
// group g exists: it does not exist, or it is hidden (or private, for a
// read) and they are not a member. Writes, REQ, COUNT, join requests and
// moderation all answer with these words, so that comparing the answers
// for a real and a made-up id tells nothing. An anonymous reader is asked
// to authenticate, in the same words whether or not the group exists.
func UnseenGroup(g, reader string) string {
	if reader == "" {
		return fmt.Sprintf("auth-required: group %s does not exist or is for members only; authenticate with NIP-42 if you are a member", g)
	}
	return fmt.Sprintf("restricted: group %s does not exist or is for members only", g)
}

// seesGroup reports whether pk may know that group g exists: it is not
// hidden, or pk is a member or one of the relay's own keys. A missing
// group is not seen by anyone, so that a missing and a hidden group look
// alike.
func seesGroup(groups GroupView, ids Identities, g, pk string) bool {
	info, exists := groups.GroupInfo(g)
	if !exists {
		return false
	}
	return !info.Hidden || groups.IsMember(g, pk) || ids.IsSystem(pk) || (pk != "" && pk == ids.Owner)
}
