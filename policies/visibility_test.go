package policies

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
	"github.com/snowclaw/snowclaw"
)

// The readers of the rule tables. Keys are canonical hex because the
// private-tier rule (snowclaw.Event.Person) only trusts canonical keys.
var (
	rOwner     = fmt.Sprintf("%064x", 0xa1)
	rRelay     = fmt.Sprintf("%064x", 0xa2)
	rAgent     = fmt.Sprintf("%064x", 0xa3)
	rAuthor    = fmt.Sprintf("%064x", 0xb1) // writes the events under test; a member of every group
	rRecipient = fmt.Sprintf("%064x", 0xb2) // named in p tags; a member of nothing
	rMember    = fmt.Sprintf("%064x", 0xb3) // a plain member of every group
	rMod       = fmt.Sprintf("%064x", 0xb4) // a moderator of every group
	rStranger  = fmt.Sprintf("%064x", 0xb5) // a member of nothing
	rRemoved   = fmt.Sprintf("%064x", 0xb6) // was a member of "priv"; a moderator removed them
)

// readerNames lists every reader a row is checked against: a row names
// who may read, everyone else must be refused.
var readerNames = map[string]string{
	"":         "anonymous",
	rOwner:     "owner",
	rRelay:     "relay",
	rAgent:     "agent",
	rAuthor:    "author",
	rRecipient: "recipient",
	rMember:    "member",
	rMod:       "moderator",
	rStranger:  "stranger",
	rRemoved:   "removed",
}

// stateGroups is group state held in maps: what the NIP-29 plugin would
// answer after its events, without the plugin. Moderates follows the
// GroupView contract: the role holders, the owner and the relay's keys.
type stateGroups struct {
	ids     Identities
	info    map[string]GroupInfo
	members map[string][]string
	mods    map[string][]string
}

func (g stateGroups) GroupInfo(id string) (GroupInfo, bool) {
	i, ok := g.info[id]
	return i, ok
}

func (g stateGroups) IsMember(group, pk string) bool {
	return pk != "" && slices.Contains(g.members[group], pk)
}

func (g stateGroups) Moderates(group, pk string) bool {
	if _, ok := g.info[group]; !ok || pk == "" {
		return false
	}
	return slices.Contains(g.mods[group], pk) || pk == g.ids.Owner || g.ids.IsSystem(pk)
}

// ruleWorld has an open group, a private one and two hidden ones, with the
// same members in each (the removed member is in none of them any more).
func ruleWorld() (Identities, stateGroups) {
	ids := Identities{Owner: rOwner, Relay: rRelay, Agent: rAgent}
	everyone := []string{rAuthor, rMember, rMod}
	return ids, stateGroups{
		ids: ids,
		info: map[string]GroupInfo{
			"open": {Restricted: true},
			"priv": {Private: true, Restricted: true},
			"hid":  {Private: true, Restricted: true, Hidden: true, Closed: true},
			// hidden without the private flag: still read like a private
			// one, or its messages would show that it exists
			"veiled": {Restricted: true, Hidden: true},
		},
		members: map[string][]string{"open": everyone, "priv": everyone, "hid": everyone, "veiled": everyone},
		mods:    map[string][]string{"open": {rMod}, "priv": {rMod}, "hid": {rMod}, "veiled": {rMod}},
	}
}

func ev(author string, kind int, tags ...nostr.Tag) *nostr.Event {
	return &nostr.Event{PubKey: author, Kind: kind, Tags: nostr.Tags(tags), Content: "x"}
}

func memory(author string, tags ...nostr.Tag) *nostr.Event {
	return ev(author, snowclaw.KindAppData, append([]nostr.Tag{{"d", "snow:memory:topic"}}, tags...)...)
}

func npubOf(t *testing.T, hex string) string {
	t.Helper()
	npub, err := nip19.EncodePublicKey(hex)
	if err != nil {
		t.Fatal(err)
	}
	return npub
}

// system names who sees what only the relay's keys and the owner see.
const system = "owner relay agent"

// TestVisibility_CanRead: every reader against every kind of event; a row
// names exactly who may read it.
func TestVisibility_CanRead(t *testing.T) {
	ids, groups := ruleWorld()
	v := &Visibility{IDs: ids, Groups: groups}
	all := "anonymous owner relay agent author recipient member moderator stranger removed"
	members := "relay agent author member moderator"
	addr := func(kind int, pk, d string) nostr.Tag { return nostr.Tag{"a", fmt.Sprintf("%d:%s:%s", kind, pk, d)} }

	for _, row := range []struct {
		name string
		evt  *nostr.Event
		may  string // the readers, by name, who may read evt
	}{
		{"public note", ev(rAuthor, 1), all},
		{"profile", ev(rAuthor, snowclaw.KindProfile), all},
		{"chat in an open group", ev(rAuthor, snowclaw.KindChat, nostr.Tag{"h", "open"}), all},
		{"chat in a private group", ev(rAuthor, snowclaw.KindChat, nostr.Tag{"h", "priv"}), members},
		{"chat in a hidden group", ev(rAuthor, snowclaw.KindChat, nostr.Tag{"h", "hid"}), members},
		{"chat in a hidden group not flagged private", ev(rAuthor, snowclaw.KindChat, nostr.Tag{"h", "veiled"}), members},
		{"a removed member's own old message", ev(rRemoved, snowclaw.KindChat, nostr.Tag{"h", "priv"}), members + " removed"},
		{"chat naming a group that does not exist", ev(rStranger, snowclaw.KindChat, nostr.Tag{"h", "gone"}), "relay agent stranger"},
		{"chat naming two groups (stored before the write rule)", ev(rStranger, snowclaw.KindChat, nostr.Tag{"h", "open"}, nostr.Tag{"h", "priv"}), system + " stranger"},

		{"39000 of an open group", ev(rRelay, snowclaw.KindGroupMetadata, nostr.Tag{"d", "open"}), all},
		{"39000 of a private group", ev(rRelay, snowclaw.KindGroupMetadata, nostr.Tag{"d", "priv"}), all},
		{"39000 of a hidden group", ev(rRelay, snowclaw.KindGroupMetadata, nostr.Tag{"d", "hid"}), members + " owner"},
		{"39001 admins of a hidden group", ev(rRelay, snowclaw.KindGroupAdmins, nostr.Tag{"d", "hid"}), members + " owner"},
		{"39002 members of a private group", ev(rRelay, snowclaw.KindGroupMembers, nostr.Tag{"d", "priv"}), all},
		{"39002 members of a hidden group", ev(rRelay, snowclaw.KindGroupMembers, nostr.Tag{"d", "hid"}), members + " owner"},
		{"39000 of a hidden group not flagged private", ev(rRelay, snowclaw.KindGroupMetadata, nostr.Tag{"d", "veiled"}), members + " owner"},
		{"39003 roles of a hidden group", ev(rRelay, snowclaw.KindGroupRoles, nostr.Tag{"d", "hid"}), members + " owner"},
		{"39000 of a deleted group", ev(rRelay, snowclaw.KindGroupMetadata, nostr.Tag{"d", "gone"}), all},

		{"public memory", memory(rAgent), all},
		{"a user's own public memory", memory(rAuthor), all},
		{"group memory of an open group", memory(rAgent, nostr.Tag{"h", "open"}), members},
		{"group memory of a private group", memory(rAgent, nostr.Tag{"h", "priv"}), members},
		{"group memory of a hidden group", memory(rAgent, nostr.Tag{"h", "hid"}), members},
		{"private memory the agent keeps about the recipient", memory(rAgent, nostr.Tag{"p", rRecipient}, nostr.Tag{"encrypted", "nip44"}), "relay agent recipient"},
		{"private memory its person wrote", memory(rAuthor, nostr.Tag{"p", rAuthor}, nostr.Tag{"encrypted", "nip44"}), "relay agent author"},
		{"private memory forged by a stranger for the recipient", memory(rStranger, nostr.Tag{"p", rRecipient}, nostr.Tag{"encrypted", "nip44"}), "relay agent stranger"},
		{"private memory naming two people", memory(rAgent, nostr.Tag{"p", rRecipient}, nostr.Tag{"p", rMember}, nostr.Tag{"encrypted", "nip44"}), "relay agent"},
		{"internal memory", memory(rAgent, nostr.Tag{"encrypted", "nip44"}), "relay agent"},
		{"group-sealed memory of a private group", memory(rAuthor, nostr.Tag{"h", "priv"}, nostr.Tag{"encrypted", "nip44-group"}, nostr.Tag{"snow:key-version", "1"}), members},
		{"group-sealed memory of an open group", memory(rAgent, nostr.Tag{"h", "open"}, nostr.Tag{"encrypted", "nip44-group"}, nostr.Tag{"snow:key-version", "1"}), members},
		{"group seal mixed with the agent's marker is internal", memory(rAgent, nostr.Tag{"h", "priv"}, nostr.Tag{"encrypted", "nip44-group"}, nostr.Tag{"encrypted", "nip44"}), "relay agent"},
		{"an encrypted group's keys", ev(rAgent, snowclaw.KindAppData, nostr.Tag{"d", snowclaw.PrefixGroupKey + "priv"}, nostr.Tag{"encrypted", "nip44"}), "relay agent"},
		{"snow:tier public on an encrypted memory does not widen it", memory(rAgent, nostr.Tag{"snow:tier", "public"}, nostr.Tag{"encrypted", "nip44"}), "relay agent"},

		{"global config", ev(rOwner, snowclaw.KindAppData, nostr.Tag{"d", snowclaw.DTagConfigGlobal}), system},
		{"a person's config", ev(rOwner, snowclaw.KindAppData, nostr.Tag{"d", snowclaw.PrefixConfigNpub + rRecipient}), system},
		{"a group's config", ev(rOwner, snowclaw.KindAppData, nostr.Tag{"d", snowclaw.PrefixConfigGroup + "open"}, nostr.Tag{"h", "open"}), system},
		{"the agent's record of the recipient", ev(rAgent, snowclaw.KindAppData, nostr.Tag{"d", snowclaw.PrefixMemoryNpub + npubOf(t, rRecipient)}), system + " recipient"},
		{"the agent's record of the recipient, legacy hex", ev(rAgent, snowclaw.KindAppData, nostr.Tag{"d", snowclaw.PrefixMemoryNpub + rRecipient}), system + " recipient"},
		{"the agent's record of a group", ev(rAgent, snowclaw.KindAppData, nostr.Tag{"d", snowclaw.PrefixMemoryGroup + "priv"}, nostr.Tag{"h", "priv"}), members},
		{"the agent's record of a group, no h tag", ev(rAgent, snowclaw.KindAppData, nostr.Tag{"d", snowclaw.PrefixMemoryGroup + "open"}), members},
		{"other agent records", ev(rAgent, snowclaw.KindAppData, nostr.Tag{"d", snowclaw.PrefixMemory + "notes"}), system},
		{"ordinary app data", ev(rAuthor, snowclaw.KindAppData, nostr.Tag{"d", "someapp:settings"}), all},

		{"gift wrap to the recipient", ev(rStranger, snowclaw.KindGiftWrap, nostr.Tag{"p", rRecipient}), "recipient"},
		{"gift wrap to the agent", ev(rStranger, snowclaw.KindGiftWrap, nostr.Tag{"p", rAgent}), "agent"},
		{"legacy DM", ev(rAuthor, snowclaw.KindLegacyDM, nostr.Tag{"p", rRecipient}), "author recipient"},

		{"deletion of a note", ev(rAuthor, snowclaw.KindDeletion, nostr.Tag{"e", strings.Repeat("1", 64)}), all},
		{"deletion naming a memory's address", ev(rAuthor, snowclaw.KindDeletion, addr(snowclaw.KindAppData, rAuthor, "snow:memory:health")), system + " author"},
		{"deletion naming a config address", ev(rOwner, snowclaw.KindDeletion, addr(snowclaw.KindAppData, rOwner, snowclaw.DTagConfigGlobal)), system},
		{"deletion naming other app data", ev(rAuthor, snowclaw.KindDeletion, addr(snowclaw.KindAppData, rAuthor, "someapp:x")), all},
		{"deletion naming another kind's address", ev(rAuthor, snowclaw.KindDeletion, addr(30023, rAuthor, "snow:memory:x")), all},

		{"invite code of a private group", ev(rMod, snowclaw.KindCreateInvite, nostr.Tag{"h", "priv"}, nostr.Tag{"code", "c"}), system + " moderator"},
		{"invite code of an open group", ev(rMod, snowclaw.KindCreateInvite, nostr.Tag{"h", "open"}, nostr.Tag{"code", "c"}), system + " moderator"},
		{"join request presenting a code", ev(rStranger, snowclaw.KindJoinRequest, nostr.Tag{"h", "hid"}, nostr.Tag{"code", "c"}), system + " moderator stranger"},
		{"join request to an open group", ev(rStranger, snowclaw.KindJoinRequest, nostr.Tag{"h", "open"}), all},
		{"join request to a private group", ev(rStranger, snowclaw.KindJoinRequest, nostr.Tag{"h", "priv"}), members + " stranger"},
		{"put-user in a hidden group", ev(rMod, snowclaw.KindPutUser, nostr.Tag{"h", "hid"}, nostr.Tag{"p", rMember}), members},
		{"remove-user in an open group", ev(rMod, snowclaw.KindRemoveUser, nostr.Tag{"h", "open"}, nostr.Tag{"p", rRemoved}), all},
	} {
		may := strings.Fields(row.may)
		for reader, name := range readerNames {
			want := slices.Contains(may, name)
			if got, why := v.CanRead(reader, snowclaw.ReadEvent(row.evt)); got != want {
				t.Errorf("%s: CanRead(%s) = %v (%s), want %v", row.name, name, got, why, want)
			} else if !got && why == "" {
				t.Errorf("%s: %s refused without a reason", row.name, name)
			}
		}
	}
}

// allReaders is the same reason for every reader.
func allReaders(r snowclaw.Reason) map[string]snowclaw.Reason {
	m := make(map[string]snowclaw.Reason, len(readerNames))
	for _, name := range readerNames {
		m[name] = r
	}
	return m
}

// TestVisibility_CheckFilter: what a filter is refused before any query
// runs, per reader. Only "clearly asks for scoped data" is refused; the
// rest is left to CanRead event by event.
func TestVisibility_CheckFilter(t *testing.T) {
	ids, groups := ruleWorld()
	v := &Visibility{IDs: ids, Groups: groups}
	h := func(g ...string) nostr.TagMap { return nostr.TagMap{"h": g} }
	const (
		ok   = snowclaw.Reason(-1) // not refused
		auth = snowclaw.ReasonAuthRequired
		rest = snowclaw.ReasonRestricted
	)
	for _, row := range []struct {
		name   string
		filter nostr.Filter
		want   map[string]snowclaw.Reason // reader name → reason; readers not named: ok
	}{
		{"no filter at all", nostr.Filter{}, nil},
		{"public notes", nostr.Filter{Kinds: []int{1}}, nil},
		{"chat of an open group", nostr.Filter{Tags: h("open")}, nil},
		{"memories of an open group", nostr.Filter{Kinds: []int{snowclaw.KindAppData}, Tags: h("open")},
			map[string]snowclaw.Reason{"anonymous": auth, "owner": rest, "recipient": rest, "stranger": rest, "removed": rest}},
		{"chat of a private group", nostr.Filter{Tags: h("priv")},
			map[string]snowclaw.Reason{"anonymous": auth, "owner": rest, "recipient": rest, "stranger": rest, "removed": rest}},
		// a hidden and a missing group are refused alike: auth-required
		// for the anonymous reader, restricted for the rest, but never
		// the owner (who may know the group) told "you are not a member"
		// in words a stranger would get for a missing one
		{"chat of a hidden group", nostr.Filter{Tags: h("hid")},
			map[string]snowclaw.Reason{"anonymous": auth, "owner": rest, "recipient": rest, "stranger": rest, "removed": rest}},
		{"chat of a hidden group not flagged private", nostr.Filter{Tags: h("veiled")},
			map[string]snowclaw.Reason{"anonymous": auth, "owner": rest, "recipient": rest, "stranger": rest, "removed": rest}},
		{"chat of a missing group", nostr.Filter{Tags: h("gone")},
			map[string]snowclaw.Reason{"anonymous": auth, "owner": rest, "author": rest, "recipient": rest, "member": rest, "moderator": rest, "stranger": rest, "removed": rest}},
		{"an open and a private group", nostr.Filter{Tags: h("open", "priv")},
			map[string]snowclaw.Reason{"anonymous": auth, "owner": rest, "recipient": rest, "stranger": rest, "removed": rest}},
		{"gift wraps, no p", nostr.Filter{Kinds: []int{snowclaw.KindGiftWrap}}, map[string]snowclaw.Reason{"anonymous": auth}},
		{"gift wraps to the recipient", nostr.Filter{Kinds: []int{snowclaw.KindGiftWrap}, Tags: nostr.TagMap{"p": {rRecipient}}},
			map[string]snowclaw.Reason{"anonymous": auth, "owner": rest, "relay": rest, "agent": rest, "author": rest, "member": rest, "moderator": rest, "stranger": rest, "removed": rest}},
		{"legacy DMs to the recipient", nostr.Filter{Kinds: []int{snowclaw.KindLegacyDM}, Tags: nostr.TagMap{"p": {rRecipient}}},
			map[string]snowclaw.Reason{"anonymous": auth, "owner": rest, "relay": rest, "agent": rest, "author": rest, "member": rest, "moderator": rest, "stranger": rest, "removed": rest}},
		{"DMs the author sent to the recipient", nostr.Filter{Kinds: []int{snowclaw.KindLegacyDM}, Authors: []string{rAuthor}, Tags: nostr.TagMap{"p": {rRecipient}}},
			map[string]snowclaw.Reason{"anonymous": auth, "owner": rest, "relay": rest, "agent": rest, "member": rest, "moderator": rest, "stranger": rest, "removed": rest}},
		{"snowclaw records by d tag", nostr.Filter{Tags: nostr.TagMap{"d": {snowclaw.DTagConfigGlobal}}}, map[string]snowclaw.Reason{"anonymous": auth}},
		{"memory items by d tag", nostr.Filter{Tags: nostr.TagMap{"d": {"snow:memory:x"}}}, nil},
		// a search asks through its extensions as a filter does through
		// its tags: group:x is ["h", x], tier:group asks for memories
		{"search of a private group", nostr.Filter{Search: "plans group:priv"},
			map[string]snowclaw.Reason{"anonymous": auth, "owner": rest, "recipient": rest, "stranger": rest, "removed": rest}},
		{"search of an open group", nostr.Filter{Search: "plans group:open"}, nil},
		{"search of an open group's memories", nostr.Filter{Search: "plans group:open tier:group"},
			map[string]snowclaw.Reason{"anonymous": auth, "owner": rest, "recipient": rest, "stranger": rest, "removed": rest}},
		{"search of a hidden group, quoted value", nostr.Filter{Search: `group:"hid" x`},
			map[string]snowclaw.Reason{"anonymous": auth, "owner": rest, "recipient": rest, "stranger": rest, "removed": rest}},
		{"search of group memories", nostr.Filter{Search: "x tier:group"}, map[string]snowclaw.Reason{"anonymous": auth}},
		{"search of private memories", nostr.Filter{Search: "TIER:Private x"}, map[string]snowclaw.Reason{"anonymous": auth}},
		{"search of internal memories", nostr.Filter{Search: "tier:public tier:internal"}, map[string]snowclaw.Reason{"anonymous": auth}},
		{"search of public memories", nostr.Filter{Search: "x tier:public"}, nil},
		{"search naming a tier in quotes", nostr.Filter{Search: `"tier:private" x`}, nil},
		{"search with a malformed extension", nostr.Filter{Search: "x tier:secret"}, allReaders(snowclaw.ReasonInvalid)},
		{"group metadata of a hidden group by d tag", nostr.Filter{Kinds: []int{snowclaw.KindGroupMetadata}, Tags: nostr.TagMap{"d": {"hid"}}}, nil},
	} {
		for reader, name := range readerNames {
			want, named := row.want[name]
			if !named {
				want = ok
			}
			err := checkFilter(v, reader, row.filter)
			got := ok
			if err != nil {
				got = snowclaw.ReasonOf(err)
			}
			if got != want {
				t.Errorf("%s: CheckFilter(%s) = %v, want reason %v", row.name, name, err, want)
			}
		}
	}
}

// checkFilter is CheckFilter as the relay runs it: on f as the websocket
// read it (snowclaw.ReadFilter), whose refusal of a malformed search comes
// first.
func checkFilter(v *Visibility, reader string, f nostr.Filter) error {
	sf, err := snowclaw.ReadFilter(f)
	if err != nil {
		return err
	}
	return v.CheckFilter(reader, sf)
}
