package groupcrypt

import (
	"slices"

	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/plugins/groups"
)

// KeyStatus is group g's key status (snowclaw.GroupKeyStatus) for reader:
// the relay's owner and the group's admins only. Anyone else is refused
// with the same restricted: whether or not g exists, so the answer
// tells a non-admin nothing of a hidden group; a group that does not
// exist is not-found to the owner.
func (p *Plugin) KeyStatus(reader, g string) (snowclaw.GroupKeyStatus, error) {
	if !p.mayManage(reader, g) {
		return snowclaw.GroupKeyStatus{}, snowclaw.Restricted("only the relay's owner and the group's admins see its key deliveries")
	}
	st, ok := p.status(g)
	if !ok {
		return snowclaw.GroupKeyStatus{}, snowclaw.NotFound("no group %q", g)
	}
	return st, nil
}

// KeyStatuses lists the status of every group reader may see it of
// (KeyStatus) that is encrypted or holds keys, sorted by group.
func (p *Plugin) KeyStatuses(reader string) []snowclaw.GroupKeyStatus {
	ids := p.o.Groups.IDs()
	slices.Sort(ids)
	out := []snowclaw.GroupKeyStatus{}
	for _, g := range ids {
		if !p.mayManage(reader, g) {
			continue
		}
		if st, ok := p.status(g); ok && (st.Encrypted || st.Version > 0) {
			out = append(out, st)
		}
	}
	return out
}

// mayManage: reader is the relay's owner or an admin of group g.
func (p *Plugin) mayManage(reader, g string) bool {
	if reader == "" {
		return false
	}
	if p.o.Owner != "" && reader == p.o.Owner {
		return true
	}
	snap, ok := p.o.Groups.Snapshot(g)
	return ok && slices.Contains(snap.Members[reader], groups.RoleAdmin)
}

// status reads group g's keys and members; false when g does not exist.
func (p *Plugin) status(g string) (snowclaw.GroupKeyStatus, bool) {
	info, ok := p.o.Groups.GroupInfo(g)
	if !ok {
		return snowclaw.GroupKeyStatus{}, false
	}
	st := snowclaw.GroupKeyStatus{Group: g, Encrypted: info.Encrypted, Members: []snowclaw.GroupKeyMember{}}
	r := p.ringOf(g)
	if r != nil {
		st.Version, st.Versions, st.UpdatedAt = r.current().Version, len(r.Keys), r.at
	}
	for _, m := range p.members(g) {
		state := snowclaw.KeyWaiting
		switch {
		case r == nil || !slices.Contains(r.Holders, m):
		case slices.Contains(r.Owed, m):
			state = snowclaw.KeyRetrying
		default:
			state = snowclaw.KeyDelivered
		}
		st.Members = append(st.Members, snowclaw.GroupKeyMember{Pubkey: m, State: state})
	}
	return st, true
}
