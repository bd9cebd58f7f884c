package policies

import (
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// TestWriteRules_Check: who may publish what. Each row is one event and
// the reason it is refused for each author who would send it; authors not
// named may publish it.
func TestWriteRules_Check(t *testing.T) {
	ids, groups := ruleWorld()
	w := &WriteRules{IDs: ids, Groups: groups}
	const (
		inv  = snowclaw.ReasonInvalid
		rest = snowclaw.ReasonRestricted
	)
	// authors who are none of the relay's keys and no member of any group
	outsiders := func(r snowclaw.Reason) map[string]snowclaw.Reason {
		return map[string]snowclaw.Reason{"owner": r, "recipient": r, "stranger": r, "removed": r}
	}
	allBut := func(r snowclaw.Reason, except ...string) map[string]snowclaw.Reason {
		out := map[string]snowclaw.Reason{}
		for _, name := range readerNames {
			if name != "anonymous" {
				out[name] = r
			}
		}
		for _, name := range except {
			delete(out, name)
		}
		return out
	}
	d := func(v string) nostr.Tag { return nostr.Tag{"d", v} }
	enc := nostr.Tag{"encrypted", "nip44"}

	for _, row := range []struct {
		name   string
		kind   int
		tags   nostr.Tags
		refuse map[string]snowclaw.Reason // author name → reason; not named: accepted
	}{
		{"a note", 1, nil, nil},
		{"a profile", snowclaw.KindProfile, nil, nil},
		{"a gift wrap", snowclaw.KindGiftWrap, nostr.Tags{{"p", rRecipient}}, nil},
		{"a deletion", snowclaw.KindDeletion, nostr.Tags{{"e", rRecipient}}, nil},

		{"chat in an open group", snowclaw.KindChat, nostr.Tags{{"h", "open"}}, outsiders(rest)},
		{"chat in a private group", snowclaw.KindChat, nostr.Tags{{"h", "priv"}}, outsiders(rest)},
		// the owner may know a hidden group and is told what to do; the
		// rest get the words of a missing group
		{"chat in a hidden group", snowclaw.KindChat, nostr.Tags{{"h", "hid"}}, outsiders(rest)},
		{"chat in a missing group", snowclaw.KindChat, nostr.Tags{{"h", "gone"}}, allBut(rest, "relay", "agent")},
		{"chat naming two groups", snowclaw.KindChat, nostr.Tags{{"h", "open"}, {"h", "priv"}}, allBut(inv)},
		{"chat with an empty h", snowclaw.KindChat, nostr.Tags{{"h", ""}}, allBut(inv)},
		{"a reaction in a private group", 7, nostr.Tags{{"h", "priv"}}, outsiders(rest)},

		{"group metadata", snowclaw.KindGroupMetadata, nostr.Tags{{"d", "open"}}, allBut(rest, "relay")},
		{"group members list", snowclaw.KindGroupMembers, nostr.Tags{{"d", "priv"}}, allBut(rest, "relay")},
		{"group roles", snowclaw.KindGroupRoles, nostr.Tags{{"d", "hid"}}, allBut(rest, "relay")},
		// moderation and join requests are judged by the groups plugin
		{"put-user", snowclaw.KindPutUser, nostr.Tags{{"h", "priv"}, {"p", rStranger}}, nil},
		{"join request to a hidden group", snowclaw.KindJoinRequest, nostr.Tags{{"h", "hid"}}, nil},
		{"create a group", snowclaw.KindCreateGroup, nostr.Tags{{"h", "new"}}, nil},
		{"put-user naming two groups", snowclaw.KindPutUser, nostr.Tags{{"h", "open"}, {"h", "priv"}}, allBut(inv)},

		{"global config", snowclaw.KindAppData, nostr.Tags{d(snowclaw.DTagConfigGlobal)}, allBut(rest, "owner")},
		{"a person's config", snowclaw.KindAppData, nostr.Tags{d(snowclaw.PrefixConfigNpub + rRecipient)}, allBut(rest, "owner")},
		{"a group's config", snowclaw.KindAppData, nostr.Tags{d(snowclaw.PrefixConfigGroup + "priv")}, allBut(rest, "owner")},
		// an h tag makes it a group event too: members only, and the
		// owner is no member of priv
		{"a group's config carrying its h tag", snowclaw.KindAppData, nostr.Tags{d(snowclaw.PrefixConfigGroup + "priv"), {"h", "priv"}}, allBut(rest)},
		{"the agent's record of a person", snowclaw.KindAppData, nostr.Tags{d(snowclaw.PrefixMemoryNpub + rRecipient)}, allBut(rest, "agent")},
		{"the agent's record of a group", snowclaw.KindAppData, nostr.Tags{d(snowclaw.PrefixMemoryGroup + "priv"), {"h", "priv"}}, allBut(rest, "agent")},
		{"other agent records", snowclaw.KindAppData, nostr.Tags{d(snowclaw.PrefixMemory + "notes")}, allBut(rest, "agent")},

		{"public memory", snowclaw.KindAppData, nostr.Tags{d("snow:memory:x")}, nil},
		{"group memory", snowclaw.KindAppData, nostr.Tags{d("snow:memory:x"), {"h", "priv"}}, outsiders(rest)},
		{"group memory of a missing group", snowclaw.KindAppData, nostr.Tags{d("snow:memory:x"), {"h", "gone"}}, allBut(rest, "relay", "agent")},
		{"private memory about the recipient", snowclaw.KindAppData, nostr.Tags{d("snow:memory:x"), {"p", rRecipient}, enc}, allBut(rest, "agent", "recipient")},
		{"private memory naming two people", snowclaw.KindAppData, nostr.Tags{d("snow:memory:x"), {"p", rRecipient}, {"p", rAgent}, enc}, allBut(rest)},
		{"private memory naming a non-canonical key", snowclaw.KindAppData, nostr.Tags{d("snow:memory:x"), {"p", "npub1xyz"}, enc}, allBut(rest)},
		{"internal memory", snowclaw.KindAppData, nostr.Tags{d("snow:memory:x"), enc}, allBut(rest, "agent")},
		{"ordinary app data", snowclaw.KindAppData, nostr.Tags{d("someapp:settings")}, nil},

		{"group-sealed memory", snowclaw.KindAppData, nostr.Tags{d("snow:memory:x"), {"h", "priv"}, {"encrypted", "nip44-group"}, {"snow:key-version", "1"}}, outsiders(rest)},
		{"group seal naming a person", snowclaw.KindAppData, nostr.Tags{d("snow:memory:x"), {"h", "priv"}, {"encrypted", "nip44-group"}, {"snow:key-version", "1"}, {"p", rRecipient}}, allBut(inv)},
		{"group seal on chat", snowclaw.KindChat, nostr.Tags{{"h", "priv"}, {"encrypted", "nip44-group"}, {"snow:key-version", "1"}}, allBut(inv)},
		{"an encrypted group's keys", snowclaw.KindAppData, nostr.Tags{d(snowclaw.PrefixGroupKey + "priv"), enc}, allBut(rest, "agent")},
	} {
		for author, name := range readerNames {
			if author == "" {
				continue // every event has an author
			}
			want, refused := row.refuse[name]
			evt := &nostr.Event{PubKey: author, Kind: row.kind, Tags: row.tags}
			err := w.Check(snowclaw.ReadEvent(evt))
			switch {
			case !refused && err != nil:
				t.Errorf("%s by %s: refused (%v), want accepted", row.name, name, err)
			case refused && err == nil:
				t.Errorf("%s by %s: accepted, want %v", row.name, name, want)
			case refused && snowclaw.ReasonOf(err) != want:
				t.Errorf("%s by %s: %v, want reason %v", row.name, name, err, want)
			}
		}
	}
}

// TestWriteRules_ConfigWithoutOwner: a relay with no owner configured takes
// config from nobody, not even from its own keys.
func TestWriteRules_ConfigWithoutOwner(t *testing.T) {
	ids, groups := ruleWorld()
	ids.Owner = ""
	w := &WriteRules{IDs: ids, Groups: groups}
	for _, author := range []string{"", rRelay, rAgent, rAuthor} {
		err := w.Check(snowclaw.ReadEvent(&nostr.Event{PubKey: author, Kind: snowclaw.KindAppData, Tags: nostr.Tags{{"d", snowclaw.DTagConfigGlobal}}}))
		if snowclaw.ReasonOf(err) != snowclaw.ReasonRestricted || err == nil {
			t.Errorf("config by %q on a relay without owner: %v, want restricted", author, err)
		}
	}
}

// TestWriteRules_AnonymousGroupRefusal: a write has an author, but the
// refusal for a group nobody may see is worded per hearer; an empty
// pubkey (never a signed event's) is asked to authenticate.
func TestWriteRules_AnonymousGroupRefusal(t *testing.T) {
	ids, groups := ruleWorld()
	w := &WriteRules{IDs: ids, Groups: groups}
	err := w.Check(snowclaw.ReadEvent(&nostr.Event{Kind: snowclaw.KindChat, Tags: nostr.Tags{{"h", "hid"}}}))
	if snowclaw.ReasonOf(err) != snowclaw.ReasonAuthRequired {
		t.Errorf("hidden group, no author: %v, want auth-required", err)
	}
}
