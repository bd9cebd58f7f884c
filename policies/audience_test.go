package policies

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// TestCanQuote: a memory may be quoted in a reply only when everyone who
// reads the reply reads the memory.
func TestCanQuote(t *testing.T) {
	ids, groups := groupsWorld()
	person := strings.Repeat("a", 64) // a canonical hex key, as Event.Person wants
	groups.members["B"][person] = true
	v := &Visibility{IDs: ids, Groups: groups}

	mem := func(tags ...nostr.Tag) *nostr.Event {
		return &nostr.Event{Kind: 30078, PubKey: "agent", Tags: append(nostr.Tags{{"d", "snow:memory:x"}}, tags...)}
	}
	public := mem()
	groupB := mem(nostr.Tag{"h", "B"})
	groupPub := mem(nostr.Tag{"h", "pub"})
	private := mem(nostr.Tag{"p", person}, nostr.Tag{"encrypted", "nip44"})
	internal := mem(nostr.Tag{"encrypted", "nip44"})

	inGroup := func(g string) *nostr.Event {
		return &nostr.Event{Kind: 9, PubKey: "agent", Tags: nostr.Tags{{"h", g}, {"p", person}}}
	}
	dm := &nostr.Event{Kind: 1059, Tags: nostr.Tags{{"p", person}}}

	for _, c := range []struct {
		name       string
		reply, evt *nostr.Event
		want       bool
	}{
		{"public memory in a public room", inGroup("pub"), public, true},
		{"public room's own memory in its reply", inGroup("pub"), groupPub, false},
		{"private room's own memory in its reply", inGroup("B"), groupB, true},
		{"another room's memory", inGroup("B"), groupPub, false},
		{"hidden room reply with another room's memory", inGroup("hid"), groupB, false},
		{"a member's private memory in their room", inGroup("B"), private, false},
		{"internal memory in a room", inGroup("B"), internal, false},
		{"private memory in its person's DM", dm, private, true},
		{"public memory in a DM", dm, public, true},
		{"internal memory in a DM", dm, internal, false},
		{"someone else's private memory in a DM", &nostr.Event{Kind: 1059, Tags: nostr.Tags{{"p", strings.Repeat("b", 64)}}}, private, false},
	} {
		if got, why := v.CanQuote(snowclaw.ReadEvent(c.reply), snowclaw.ReadEvent(c.evt)); got != c.want {
			t.Errorf("%s: CanQuote = %v (%s), want %v", c.name, got, why, c.want)
		}
	}
}
