package policies

import (
	"context"

	"github.com/snowclaw/snowclaw"
)

// CanQuote is the read rule for text passed on in an event the relay's
// own keys write (the agent's replies): evt may be quoted in reply only
// if everyone who may read reply may read evt. The agent reads
// everything, so without this its replies would carry memories to readers
// CanRead refuses them to: a members-only group memory into a public
// room's reply, or someone's private memory into a group.
//
// The readers of a reply are not a fixed list (a member who joins
// tomorrow reads today's replies), so CanQuote asks CanRead about the
// reply's kinds of reader: an anonymous client (anyone reading an open
// room), a member of the reply's group who has no other right (the
// stand-in below), and the reply's p recipients (a gift wrap's only
// reader). Whoever of them may read reply must be able to read evt.
func (v *Visibility) CanQuote(reply, evt *snowclaw.Event) (bool, string) {
	type reader struct {
		pk  string
		vis *Visibility
	}
	readers := []reader{{"", v}}
	if g := reply.Group; g != "" {
		readers = append(readers, reader{standIn, &Visibility{IDs: v.IDs, Groups: memberOnlyOf{v.Groups, g}}})
	}
	for _, p := range reply.P {
		readers = append(readers, reader{p, v})
	}
	for _, r := range readers {
		if ok, _ := r.vis.CanRead(r.pk, reply); !ok {
			continue
		}
		if ok, why := r.vis.CanRead(r.pk, evt); !ok {
			return false, why
		}
	}
	return true, ""
}

// standIn is a reader no key can be (not hex): never an author, the
// owner, a system key or anyone's person, so it holds exactly the rights
// memberOnlyOf gives it.
const standIn = "stand-in:group-member"

// memberOnlyOf is the group state as the stand-in sees it: a member of
// group g (not a moderator) and of nothing else; everyone else as they are.
type memberOnlyOf struct {
	GroupView
	g string
}

func (m memberOnlyOf) IsMember(group, pk string) bool {
	if pk == standIn {
		return group == m.g
	}
	return m.GroupView.IsMember(group, pk)
}

func (m memberOnlyOf) Moderates(group, pk string) bool {
	return pk != standIn && m.GroupView.Moderates(group, pk)
}

// Hearer is who learns the answer to an event signed by signer: the
// connection's reader, or the signer when the relay calls itself. An
// answer may name an event only if its hearer may read it (CanRead), or
// "you are not the author of <id>" / "<id> is not in this group" tells a
// stranger that an event they computed the id of exists.
func Hearer(ctx context.Context, signer string) string {
	if ConnFrom(ctx) != nil {
		return ReaderOf(ctx)
	}
	return signer
}
