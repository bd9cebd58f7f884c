package groups

import (
	"slices"

	"github.com/snowclaw/snowclaw/policies"
)

// held is the group state as a policies.GroupView for code that already
// holds s.mu (RejectEvent runs under it): there the read rule is asked
// through held, since the locking methods would take s.mu again. The
// locking methods are held under the lock, so both answer alike.
type held struct{ s *Groups }

func (h held) GroupInfo(id string) (policies.GroupInfo, bool) {
	g, ok := h.s.groups[id]
	if !ok {
		return policies.GroupInfo{}, false
	}
	info := g.GroupInfo
	info.Encrypted = info.Encrypted || h.s.forcedEncrypted(id)
	return info, true
}

func (h held) IsMember(group, pubkey string) bool {
	g, ok := h.s.groups[group]
	if !ok || pubkey == "" {
		return false
	}
	_, member := g.Members[pubkey]
	return member
}

func (h held) Moderates(group, pubkey string) bool {
	g, ok := h.s.groups[group]
	if !ok || pubkey == "" {
		return false
	}
	_, mod := h.s.powers(g, pubkey)
	return mod
}

func (h held) Banned(group, pubkey string) bool {
	g, ok := h.s.groups[group]
	if !ok || pubkey == "" {
		return false
	}
	_, member := g.Members[pubkey]
	return g.Removed[pubkey] && !member
}

// forcedEncrypted reports whether the configuration keeps group id encrypted.
func (s *Groups) forcedEncrypted(id string) bool { return slices.Contains(s.opts.Encrypted, id) }
