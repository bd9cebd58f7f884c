package node_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/policies"
)

// TestWriteRules_Table covers each write rule with the author allowed and
// an author refused, and the prefix a refused client sees.
func TestWriteRules_Table(t *testing.T) {
	creator := newUser()
	e := startEnv(t, func(o *node.Options) { o.GroupCreators = []string{creator.pk} })
	member, stranger, person := newUser(), newUser(), newUser()
	anon := e.connect(nil) // writes need a valid signature, not auth
	e.mustPublish(anon, mkEvent(e.owner, 9007, nostr.Tags{{"h", privGroup}}, ""))
	e.mustPublish(anon, mkEvent(member, 9021, nostr.Tags{{"h", privGroup}}, ""))

	big := strings.Repeat("x", policies.DefaultLimits().MaxContentBytes+1)
	manyTags := nostr.Tags{}
	for i := 0; i <= policies.DefaultLimits().MaxTags; i++ {
		manyTags = append(manyTags, nostr.Tag{"t", strconv.Itoa(i)})
	}
	future := mkEvent(member, 1, nil, "from the future")
	future.CreatedAt = nostr.Now() + 3600
	future.Sign(member.sk)
	expired := mkEvent(member, 1, nostr.Tags{{"expiration", strconv.FormatInt(int64(nostr.Now())-10, 10)}}, "old news")

	cases := []struct {
		name string
		evt  nostr.Event
		want string // "" = accepted
	}{
		{"member_chat_in_group", mkEvent(member, 9, nostr.Tags{{"h", privGroup}}, "hi"), ""},
		{"stranger_chat_in_group", mkEvent(stranger, 9, nostr.Tags{{"h", privGroup}}, "hi"), "restricted:"},
		{"chat_in_missing_group", mkEvent(member, 9, nostr.Tags{{"h", "nope"}}, "hi"), "restricted:"},
		{"agent_chat_in_group", mkEvent(e.agent, 9, nostr.Tags{{"h", privGroup}}, "agent here"), ""},
		{"owner_config", mkEvent(e.owner, 30078, nostr.Tags{{"d", "snowclaw:config:global"}}, "{}"), ""},
		{"stranger_config", mkEvent(stranger, 30078, nostr.Tags{{"d", "snowclaw:config:global"}}, "{}"), "restricted:"},
		{"agent_config", mkEvent(e.agent, 30078, nostr.Tags{{"d", "snowclaw:config:group:priv"}}, "{}"), "restricted:"},
		{"member_config_group", mkEvent(member, 30078, nostr.Tags{{"d", "snowclaw:config:group:priv"}, {"h", privGroup}}, "{}"), "restricted:"},
		{"agent_person_record", mkEvent(e.agent, 30078, nostr.Tags{{"d", "snowclaw:memory:npub:npub1x"}}, "{}"), ""},
		{"stranger_person_record", mkEvent(stranger, 30078, nostr.Tags{{"d", "snowclaw:memory:npub:npub1x"}}, "{}"), "restricted:"},
		{"owner_group_record", mkEvent(e.owner, 30078, nostr.Tags{{"d", "snowclaw:memory:group:priv"}, {"h", privGroup}}, "{}"), "restricted:"},
		{"stranger_public_memory", mkEvent(stranger, 30078, nostr.Tags{{"d", "snow:memory:fact/x"}}, "fact"), ""},
		{"person_own_private_memory", mkEvent(person, 30078, nostr.Tags{{"d", "snow:memory:me"}, {"p", person.pk}, {"encrypted", "nip44"}}, "c"), ""},
		{"stranger_private_memory_of_other", mkEvent(stranger, 30078, nostr.Tags{{"d", "snow:memory:x"}, {"p", person.pk}, {"encrypted", "nip44"}}, "c"), "restricted:"},
		{"stranger_internal_memory", mkEvent(stranger, 30078, nostr.Tags{{"d", "snow:memory:x"}, {"encrypted", "nip44"}}, "c"), "restricted:"},
		{"agent_internal_memory", mkEvent(e.agent, 30078, nostr.Tags{{"d", "snow:memory:x"}, {"encrypted", "nip44"}}, "c"), ""},
		{"stranger_group_memory", mkEvent(stranger, 30078, nostr.Tags{{"d", "snow:memory:g"}, {"h", privGroup}}, "c"), "restricted:"},
		{"member_group_memory", mkEvent(member, 30078, nostr.Tags{{"d", "snow:memory:g"}, {"h", privGroup}}, "c"), ""},
		{"stranger_group_metadata", mkEvent(stranger, 39000, nostr.Tags{{"d", privGroup}}, ""), "restricted:"},
		{"stranger_create_group", mkEvent(stranger, 9007, nostr.Tags{{"h", "mine"}}, ""), "restricted:"},
		{"creator_create_group", mkEvent(creator, 9007, nostr.Tags{{"h", "mine"}}, ""), ""},
		{"owner_create_existing", mkEvent(e.owner, 9007, nostr.Tags{{"h", privGroup}}, "again"), "duplicate:"},
		{"bad_group_id", mkEvent(e.owner, 9007, nostr.Tags{{"h", "no spaces"}}, ""), "invalid:"},
		{"member_put_user", mkEvent(member, 9000, nostr.Tags{{"h", privGroup}, {"p", stranger.pk}}, ""), "restricted:"},
		{"content_too_big", mkEvent(member, 1, nil, big), "invalid:"},
		{"too_many_tags", mkEvent(member, 1, manyTags, ""), "invalid:"},
		{"created_in_future", future, "invalid:"},
		{"already_expired", expired, "invalid:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want == "" {
				e.mustPublish(anon, tc.evt)
				return
			}
			e.refusedWith(anon, tc.evt, tc.want)
			got, _ := fetch(t, e.connect(&e.agent), nostr.Filter{IDs: []string{tc.evt.ID}})
			if len(got) != 0 {
				t.Fatal("refused event was stored")
			}
		})
	}
}

func TestWriteRules_NoOwnerRefusesConfig(t *testing.T) {
	e := startEnv(t, func(o *node.Options) { o.Owner = "" })
	someone := newUser()
	e.refusedWith(e.connect(nil), mkEvent(someone, 30078, nostr.Tags{{"d", "snowclaw:config:global"}}, "{}"), "restricted:")
}

func TestWriteRules_RateLimitPerPubkey(t *testing.T) {
	e := startEnv(t, func(o *node.Options) { o.EventRatePubkey = policies.Rate{PerSecond: 1, Burst: 3} })
	u := newUser()
	c := e.connect(nil)
	var refused error
	for i := 0; i < 10 && refused == nil; i++ {
		refused = publish(c, mkEvent(u, 1, nil, "spam "+strconv.Itoa(i)))
	}
	if refused == nil || !strings.Contains(refused.Error(), "rate-limited:") {
		t.Fatalf("10 quick events: got %v, want rate-limited", refused)
	}
	// another author from the same address is not punished for it
	e.mustPublish(c, mkEvent(newUser(), 1, nil, "innocent"))
	// the bucket refills at 1/s of the wall clock: the bound is that
	// time limit with slack, and a refusal spends no token
	testwait.Within(t, 3*time.Second, "u's bucket to refill", func() bool {
		err := publish(c, mkEvent(u, 1, nil, "after a pause"))
		if err != nil && !strings.Contains(err.Error(), "rate-limited:") {
			t.Fatalf("after a pause: %v", err)
		}
		return err == nil
	})
}

func TestWriteRules_FilterTooBig(t *testing.T) {
	e := startEnv(t)
	authors := make([]string, policies.DefaultLimits().MaxFilterValues+1)
	for i := range authors {
		authors[i] = newUser().pk
	}
	_, closed := fetch(t, e.connect(nil), nostr.Filter{Authors: authors})
	if !strings.HasPrefix(closed, "invalid:") {
		t.Fatalf("huge filter: CLOSED %q, want invalid:", closed)
	}
}
