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
//     the relay's read rule lets them), and they hold the current one;
//   - a member whose delivery is owed (one that failed, or that a crash
//     interrupted): every version again, until one is stored.
//
// Encryption off: nothing changes; the keys stay for what they sealed,
// and switching it on again rotates if anyone left in between. It works
// from the state, not from the event that changed it, so running it
// twice, late or after a restart gives the same keys; Run calls it
// periodically, which is what resends an owed delivery.
//
// The record is written before anything is sent, naming everyone about
// to be sent something as owed, and again once the sends are done, with
// only those that failed: so a send that fails, or never happens because
// the process stopped, is retried from the stored record, by this
// instance or by the next leader.
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
	var sendNew []string // who gets the new version only; r.Owed gets every version
	switch {
	case r == nil:
		k, err := snowclaw.NewGroupKey(1)
		if err != nil {
			p.log.Error("group key not made", "group", g, "err", err)
			return
		}
		r = &ring{Group: g, Keys: []snowclaw.GroupKey{k}, Holders: members, Owed: members}
	default:
		added, removed := missing(members, r.Holders), missing(r.Holders, members)
		// a departed member's owed delivery is owed no more
		owed := missing(r.Owed, missing(r.Owed, members))
		if len(added) == 0 && len(removed) == 0 && len(owed) == 0 {
			return
		}
		if len(removed) > 0 {
			k, err := snowclaw.NewGroupKey(r.current().Version + 1)
			if err != nil {
				p.log.Error("group key not rotated", "group", g, "err", err)
				return
			}
			r.Keys = append(r.Keys, k)
			sendNew = missing(members, append(slices.Clone(added), owed...))
			p.log.Info("group key rotated", "group", g, "version", k.Version, "departed", len(removed))
		}
		r.Owed = union(owed, added)
		if len(added) > 0 || len(removed) > 0 {
			r.Holders = members
			r.Owed = union(r.Owed, sendNew)
		}
	}
	if held := p.ringOf(g); held == nil || !r.same(held) {
		if err := p.save(ctx, r); err != nil {
			p.log.Error("group keys not stored; nothing sent", "group", g, "err", err)
			return
		}
	}
	cur := r.current()
	var failed []string
	for _, m := range r.Owed {
		all := !slices.Contains(sendNew, m)
		msg := snowclaw.GroupKeyMessage{Group: g, Current: cur.Version, Keys: []snowclaw.GroupKey{cur}}
		if all {
			msg.Keys = r.Keys
		}
		if err := p.deliver(ctx, m, msg); err != nil {
			failed = append(failed, m)
		}
	}
	if len(failed) == len(r.Owed) {
		return // the record already names them all
	}
	done := r.clone()
	done.Owed = failed
	if err := p.save(ctx, done); err != nil {
		// the record still names the members just served: they are sent
		// the keys once more at the next reconcile, which does no harm
		p.log.Warn("group key deliveries not recorded", "group", g, "err", err)
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

// union is a with the elements of b it lacks, sorted.
func union(a, b []string) []string {
	out := append(slices.Clone(a), missing(b, a)...)
	slices.Sort(out)
	return slices.Compact(out)
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
// A failure is logged and returned: the member stays owed (reconcile).
func (p *Plugin) deliver(ctx context.Context, member string, m snowclaw.GroupKeyMessage) error {
	wrap, err := privmsg.Wrap(ctx, p.o.AgentSecret, member, m.Encode(), nostr.Tags{{snowclaw.GroupKeyMessageType, m.Group}})
	if err == nil {
		err = p.publish(ctx, &wrap)
	}
	if err != nil {
		p.log.Error("group key not delivered; retried", "group", m.Group, "version", m.Current, "member", snowclaw.NpubOf(member),
			"retry_in", p.o.RetryEvery, "err", err)
	}
	return err
}
