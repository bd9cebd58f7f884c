package groupcrypt

import (
	"context"
	"slices"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/privmsg"
)

// reconcile brings group g's keys in line with its members and its flag:
//
//   - encryption on and no key yet: version 1, sent to every member;
//   - a holder of the current key is no longer a member (removed, left):
//     a new version, sent to the remaining members, so what is sealed
//     from now on is not readable with any key the departed one holds;
//   - a new member: every version (members read the group's history, as
//     the relay's read rule lets them), and they hold the current one.
//
// Encryption off: nothing changes; the keys stay for what they sealed,
// and switching it on again rotates if anyone left in between. It works
// from the state, not from the event that changed it, so running it
// twice, late or after a restart gives the same keys.
func (p *Plugin) reconcile(ctx context.Context, g string) {
	if !p.o.Active() || p.publish == nil {
		return
	}
	p.work.Lock()
	defer p.work.Unlock()
	info, ok := p.o.Groups.GroupInfo(g)
	if !ok || !info.Encrypted {
		return
	}
	members := p.members(g)
	r := p.ringOf(g)
	var sendNew, sendAll []string // who gets the new key, who gets every key
	switch {
	case r == nil:
		k, err := snowclaw.NewGroupKey(1)
		if err != nil {
			p.log.Error("group key not made", "group", g, "err", err)
			return
		}
		r = &ring{Group: g, Keys: []snowclaw.GroupKey{k}}
		sendAll = members
	default:
		added, removed := missing(members, r.Holders), missing(r.Holders, members)
		if len(added) == 0 && len(removed) == 0 {
			return
		}
		if len(removed) > 0 {
			k, err := snowclaw.NewGroupKey(r.current().Version + 1)
			if err != nil {
				p.log.Error("group key not rotated", "group", g, "err", err)
				return
			}
			r.Keys = append(r.Keys, k)
			sendNew = missing(members, added)
			p.log.Info("group key rotated", "group", g, "version", k.Version, "departed", len(removed))
		}
		sendAll = added
	}
	r.Holders = members
	if err := p.save(ctx, r); err != nil {
		p.log.Error("group keys not stored; nothing sent", "group", g, "err", err)
		return
	}
	cur := r.current()
	for _, m := range sendNew {
		p.deliver(ctx, m, snowclaw.GroupKeyMessage{Group: g, Current: cur.Version, Keys: []snowclaw.GroupKey{cur}})
	}
	for _, m := range sendAll {
		p.deliver(ctx, m, snowclaw.GroupKeyMessage{Group: g, Current: cur.Version, Keys: r.Keys})
	}
}

// members are group g's members to hold its key, sorted: the relay's own
// keys read through the relay and are given nothing.
func (p *Plugin) members(g string) []string {
	snap, ok := p.o.Groups.Snapshot(g)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(snap.Members))
	for pk := range snap.Members {
		if p.o.IsSystem == nil || !p.o.IsSystem(pk) {
			out = append(out, pk)
		}
	}
	slices.Sort(out)
	return out
}

// missing lists the elements of a not in b.
func missing(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// deliver sends m to member as a NIP-17 private message from the agent:
// a kind 14 rumor sealed and gift-wrapped to them, tagged
// ["snow:group-key", group]. Only the member can open it, and the seal's
// signature proves the agent wrote it (snowclaw.ParseGroupKeyMessage).
func (p *Plugin) deliver(ctx context.Context, member string, m snowclaw.GroupKeyMessage) {
	wrap, err := privmsg.Wrap(ctx, p.o.AgentSecret, member, m.Encode(), nostr.Tags{{snowclaw.GroupKeyMessageType, m.Group}})
	if err == nil {
		err = p.publish(ctx, &wrap)
	}
	if err != nil {
		// the key is stored: the next change of the group, or a restart,
		// does not resend it; the member asks an admin to re-add them
		p.log.Error("group key not delivered", "group", m.Group, "version", m.Current, "member", snowclaw.NpubOf(member), "err", err)
	}
}
