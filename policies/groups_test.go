package policies

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// modGroups is fakeGroups with moderators.
type modGroups struct {
	fakeGroups
	mods map[string]map[string]bool
}

func (g modGroups) Moderates(group, pubkey string) bool { return g.mods[group][pubkey] }

func groupsWorld() (Identities, modGroups) {
	ids := Identities{Owner: "owner", Relay: "relay", Agent: "agent"}
	return ids, modGroups{
		fakeGroups: fakeGroups{
			info: map[string]GroupInfo{
				"A":   {Private: true, Restricted: true},
				"B":   {Private: true, Restricted: true},
				"pub": {Restricted: true},
				"hid": {Hidden: true, Restricted: true},
				// NIP-29 without "restricted": anyone may write
				"unr": {},
			},
			members: map[string]map[string]bool{
				"A":   {"stranger": true, "mod": true},
				"B":   {"alice": true, "mod": true},
				"pub": {"mod": true, "alice": true},
				"hid": {"alice": true},
			},
		},
		mods: map[string]map[string]bool{"pub": {"mod": true}},
	}
}

// TestWriteRules_OneGroupPerEvent: several or empty h tags are refused
// with invalid: from every author and for every kind.
func TestWriteRules_OneGroupPerEvent(t *testing.T) {
	ids, groups := groupsWorld()
	w := &WriteRules{IDs: ids, Groups: groups}
	for _, author := range []string{"stranger", "alice", "owner", "relay", "agent"} {
		for _, kind := range []int{9, 9000, 9007, 9021, 30078, 39000, 5, 0} {
			for _, tags := range []nostr.Tags{{{"h", ""}, {"h", "B"}}, {{"h", "A"}, {"h", "B"}}, {{"h"}}, {{"h", ""}}, {{"h"}, {"h", "B"}}} {
				evt := &nostr.Event{PubKey: author, Kind: kind, Tags: tags}
				if reject, msg := outcome(w.Check(snowclaw.ReadEvent(evt))); !reject || !strings.HasPrefix(msg, "invalid: ") {
					t.Errorf("%s kind %d %v: reject %v %q, want invalid:", author, kind, tags, reject, msg)
				}
			}
		}
	}
}

// TestGroupRefusals_HiddenLikeMissing: the write and filter rules word a
// hidden group exactly like a missing one for non-members.
func TestGroupRefusals_HiddenLikeMissing(t *testing.T) {
	ids, groups := groupsWorld()
	w := &WriteRules{IDs: ids, Groups: groups}
	v := &Visibility{IDs: ids, Groups: groups}
	for _, who := range []string{"stranger", ""} {
		answer := func(g string) string {
			_, wmsg := outcome(w.Check(snowclaw.ReadEvent(&nostr.Event{PubKey: who, Kind: 9, Tags: nostr.Tags{{"h", g}}})))
			_, fmsg := outcome(checkFilter(v, who, nostr.Filter{Tags: nostr.TagMap{"h": {g}}}))
			return strings.ReplaceAll(wmsg+"|"+fmsg, g, "G")
		}
		if hid, none := answer("hid"), answer("nosuch"); hid != none {
			t.Errorf("reader %q: hidden %q, missing %q", who, hid, none)
		}
	}
	// a visible group still says what to do
	if _, msg := outcome(w.Check(snowclaw.ReadEvent(&nostr.Event{PubKey: "stranger", Kind: 9, Tags: nostr.Tags{{"h", "B"}}}))); !strings.Contains(msg, "send a join request") {
		t.Errorf("visible group: %q", msg)
	}
}

func TestCanRead_MalformedInvitesHidden(t *testing.T) {
	ids, groups := groupsWorld()
	v := &Visibility{IDs: ids, Groups: groups}
	malformed := &nostr.Event{PubKey: "stranger", Kind: 9, Tags: nostr.Tags{{"h", "A"}, {"h", "pub"}}}
	invite := &nostr.Event{PubKey: "mod", Kind: snowclaw.KindCreateInvite, Tags: nostr.Tags{{"h", "pub"}, {"code", "x"}}}
	join := &nostr.Event{PubKey: "joiner", Kind: snowclaw.KindJoinRequest, Tags: nostr.Tags{{"h", "pub"}, {"code", "x"}}}
	plainJoin := &nostr.Event{PubKey: "joiner", Kind: snowclaw.KindJoinRequest, Tags: nostr.Tags{{"h", "pub"}}}
	hidden := &nostr.Event{PubKey: "alice", Kind: 9, Tags: nostr.Tags{{"h", "hid"}}}
	for _, tc := range []struct {
		evt     *nostr.Event
		readers map[string]bool
	}{
		{malformed, map[string]bool{"stranger": true, "owner": true, "relay": true, "agent": true, "mod": false, "alice": false, "": false}},
		{invite, map[string]bool{"mod": true, "relay": true, "agent": true, "alice": false, "joiner": false, "stranger": false, "": false}},
		{join, map[string]bool{"mod": true, "joiner": true, "agent": true, "alice": false, "stranger": false, "": false}},
		{plainJoin, map[string]bool{"alice": true, "stranger": true, "": true}},
		{hidden, map[string]bool{"alice": true, "agent": true, "stranger": false, "mod": false, "": false}},
	} {
		for reader, want := range tc.readers {
			if ok, why := v.CanRead(reader, snowclaw.ReadEvent(tc.evt)); ok != want {
				t.Errorf("CanRead(%q, kind %d %v) = %v (%s), want %v", reader, tc.evt.Kind, tc.evt.Tags, ok, why, want)
			}
		}
	}
}

// TestWriteRules_UnrestrictedGroup: NIP-29's restricted flag is what
// keeps non-members from writing; without it anyone may post, but a
// hidden group is still answered like a missing one, and a restricted
// one still needs membership.
func TestWriteRules_UnrestrictedGroup(t *testing.T) {
	ids, groups := groupsWorld()
	w := &WriteRules{IDs: ids, Groups: groups}
	post := func(g string) error {
		return w.Check(snowclaw.ReadEvent(&nostr.Event{PubKey: "stranger", Kind: 9, Tags: nostr.Tags{{"h", g}}}))
	}
	if err := post("unr"); err != nil {
		t.Errorf("unrestricted group refused a non-member: %v", err)
	}
	if reject, msg := outcome(post("pub")); !reject || !strings.HasPrefix(msg, "restricted: ") {
		t.Errorf("restricted group: reject %v %q, want restricted:", reject, msg)
	}
}
