package node_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/wsclient"
)

// world is a relay with two groups and one event of every scoped class,
// and the people who read them.
type world struct {
	*testEnv
	member, nonMember, person user // person: subject of private memory
	events                    map[string]nostr.Event
}

const (
	privGroup = "priv"
	pubGroup  = "pub"
)

func buildWorld(t *testing.T) *world { return buildWorldWith(t) }

func buildWorldWith(t *testing.T, mods ...func(*node.Options)) *world {
	e := startEnv(t, mods...)
	w := &world{testEnv: e, member: newUser(), nonMember: newUser(), person: newUser(), events: map[string]nostr.Event{}}
	oc := e.connect(&e.owner)
	e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", privGroup}}, ""))
	e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", pubGroup}}, ""))
	e.mustPublish(oc, mkEvent(e.owner, 9002, nostr.Tags{{"h", pubGroup}, {"public"}, {"restricted"}}, ""))
	mc := e.connect(&w.member)
	e.mustPublish(mc, mkEvent(w.member, 9021, nostr.Tags{{"h", privGroup}}, ""))
	e.mustPublish(mc, mkEvent(w.member, 9021, nostr.Tags{{"h", pubGroup}}, ""))

	ac := e.connect(&e.agent)
	npubPerson, _ := nip19.EncodePublicKey(w.person.pk)
	wrapper := newUser()
	add := func(name string, c *wsclient.Client, evt nostr.Event) {
		w.events[name] = e.mustPublish(c, evt)
	}
	add("chat-private-group", mc, mkEvent(w.member, 9, nostr.Tags{{"h", privGroup}}, "secret plans"))
	add("reply-private-group", mc, mkEvent(w.member, 9, nostr.Tags{{"h", privGroup}, {"e", w.events["chat-private-group"].ID}}, "re: secret plans"))
	add("chat-public-group", mc, mkEvent(w.member, 9, nostr.Tags{{"h", pubGroup}}, "hello world"))
	add("memory-public", mc, mkEvent(w.member, 30078, nostr.Tags{{"d", "snow:memory:fact/go"}, {"snow:tier", "public"}}, "Go has goroutines"))
	add("chat-private-a-ref", mc, mkEvent(w.member, 9, nostr.Tags{{"h", privGroup}, {"a", "30078:" + w.member.pk + ":snow:memory:fact/go"}}, "see this fact"))
	add("memory-group", ac, mkEvent(e.agent, 30078, nostr.Tags{{"d", "snow:memory:group/priv/decisions"}, {"h", privGroup}, {"snow:tier", "group"}}, "we ship friday"))
	add("memory-group-public-group", ac, mkEvent(e.agent, 30078, nostr.Tags{{"d", "snow:memory:group/pub/notes"}, {"h", pubGroup}}, "pub notes"))
	add("memory-private", ac, mkEvent(e.agent, 30078, nostr.Tags{{"d", "snow:memory:user/x/prefs"}, {"p", w.person.pk}, {"encrypted", "nip44"}}, "ciphertext-private"))
	add("memory-internal", ac, mkEvent(e.agent, 30078, nostr.Tags{{"d", "snow:memory:internal/x"}, {"encrypted", "nip44"}}, "ciphertext-internal"))
	add("config", oc, mkEvent(e.owner, 30078, nostr.Tags{{"d", "snowclaw:config:global"}}, `{"respond_mode":"all"}`))
	add("record-person", ac, mkEvent(e.agent, 30078, nostr.Tags{{"d", "snowclaw:memory:npub:" + npubPerson}}, `{"notes":[]}`))
	add("record-group", ac, mkEvent(e.agent, 30078, nostr.Tags{{"d", "snowclaw:memory:group:" + privGroup}, {"h", privGroup}}, `{"purpose":"x"}`))
	add("gift-wrap", e.connect(nil), mkEvent(wrapper, 1059, nostr.Tags{{"p", w.person.pk}}, "sealed"))
	return w
}

// visibleTo is the expected read matrix of docs/access.md.
var visibleTo = map[string][]string{
	"chat-private-group":        {"member", "owner", "agent"},
	"reply-private-group":       {"member", "owner", "agent"},
	"chat-private-a-ref":        {"member", "owner", "agent"},
	"chat-public-group":         {"anon", "non-member", "member", "owner", "agent", "person"},
	"memory-public":             {"anon", "non-member", "member", "owner", "agent", "person"},
	"memory-group":              {"member", "owner", "agent"},
	"memory-group-public-group": {"member", "owner", "agent"},
	"memory-private":            {"agent", "person"},
	"memory-internal":           {"agent"},
	"config":                    {"owner", "agent"},
	"record-person":             {"owner", "agent", "person"},
	"record-group":              {"member", "owner", "agent"},
	"gift-wrap":                 {"person"},
}

func (w *world) readers() map[string]*user {
	return map[string]*user{
		"anon": nil, "non-member": &w.nonMember, "member": &w.member,
		"owner": &w.owner, "agent": &w.agent, "person": &w.person,
	}
}

func expectVisible(event, reader string) bool {
	for _, r := range visibleTo[event] {
		if r == reader {
			return true
		}
	}
	return false
}

// readPaths are the filter forms a reader can use to reach one event.
func readPaths(evt nostr.Event) map[string]nostr.Filter {
	paths := map[string]nostr.Filter{
		"ids":           {IDs: []string{evt.ID}},
		"authors+kinds": {Authors: []string{evt.PubKey}, Kinds: []int{evt.Kind}},
		"kinds-alone":   {Kinds: []int{evt.Kind}, Limit: 500},
	}
	if d := evt.Tags.GetD(); d != "" {
		paths["#d"] = nostr.Filter{Tags: nostr.TagMap{"d": {d}}}
	}
	if e := evt.Tags.Find("e"); e != nil {
		paths["#e"] = nostr.Filter{Tags: nostr.TagMap{"e": {e[1]}}}
	}
	if a := evt.Tags.Find("a"); a != nil {
		paths["#a"] = nostr.Filter{Tags: nostr.TagMap{"a": {a[1]}}}
	}
	if p := evt.Tags.Find("p"); p != nil {
		paths["#p"] = nostr.Filter{Kinds: []int{evt.Kind}, Tags: nostr.TagMap{"p": {p[1]}}}
	}
	return paths
}

// TestAccess_StoredAndCount checks every scoped event against every reader
// over every stored-read path and COUNT.
func TestAccess_StoredAndCount(t *testing.T) {
	w := buildWorld(t)
	conns := map[string]*wsclient.Client{}
	for name, u := range w.readers() {
		conns[name] = w.connect(u)
	}
	cases := 0
	for evName, evt := range w.events {
		for reader := range w.readers() {
			want := expectVisible(evName, reader)
			for path, f := range readPaths(evt) {
				t.Run(fmt.Sprintf("%s/%s/%s", evName, reader, path), func(t *testing.T) {
					cases++
					got, closed := fetch(t, conns[reader], f)
					if contains(got, evt.ID) != want {
						t.Fatalf("visible=%v, want %v (closed=%q)", !want, want, closed)
					}
					if !want && closed == "" {
						for _, g := range got {
							if strings.Contains(g.Content, evt.Content) && g.ID != evt.ID {
								t.Fatalf("content of %s leaked through %s", evName, g.ID)
							}
						}
					}
				})
			}
			t.Run(fmt.Sprintf("%s/%s/count", evName, reader), func(t *testing.T) {
				cases++
				n, _ := count(t, conns[reader], nostr.Filter{IDs: []string{evt.ID}})
				if want := map[bool]int64{true: 1, false: 0}[want]; n != want {
					t.Fatalf("COUNT = %d, want %d", n, want)
				}
			})
		}
	}
	t.Logf("%d access cases", cases)
}

// TestAccess_Filters checks the early answers: auth-required for an
// anonymous reader asking for scoped data, restricted for a non-member,
// including limit:0 subscriptions that khatru would otherwise let through.
func TestAccess_Filters(t *testing.T) {
	w := buildWorld(t)
	zero := func(f nostr.Filter) nostr.Filter { f.LimitZero = true; return f }
	cases := []struct {
		name   string
		reader *user
		filter nostr.Filter
		closed string // "" = answered with EOSE
	}{
		{"anon_private_group", nil, nostr.Filter{Tags: nostr.TagMap{"h": {privGroup}}}, "auth-required:"},
		{"anon_private_group_limit0", nil, zero(nostr.Filter{Tags: nostr.TagMap{"h": {privGroup}}}), "auth-required:"},
		{"nonmember_private_group", &w.nonMember, nostr.Filter{Tags: nostr.TagMap{"h": {privGroup}}}, "restricted:"},
		{"nonmember_private_group_limit0", &w.nonMember, zero(nostr.Filter{Tags: nostr.TagMap{"h": {privGroup}}}), "restricted:"},
		{"nonmember_missing_group", &w.nonMember, nostr.Filter{Tags: nostr.TagMap{"h": {"nope"}}}, "restricted:"},
		{"member_private_group", &w.member, nostr.Filter{Tags: nostr.TagMap{"h": {privGroup}}}, ""},
		{"owner_private_group", &w.owner, nostr.Filter{Tags: nostr.TagMap{"h": {privGroup}}}, ""},
		{"anon_public_group_chat", nil, nostr.Filter{Kinds: []int{9}, Tags: nostr.TagMap{"h": {pubGroup}}}, ""},
		{"anon_public_group_memories", nil, nostr.Filter{Kinds: []int{30078}, Tags: nostr.TagMap{"h": {pubGroup}}}, "auth-required:"},
		{"anon_gift_wraps", nil, nostr.Filter{Kinds: []int{1059}}, "auth-required:"},
		{"nonmember_gift_wraps_for_other", &w.nonMember, nostr.Filter{Kinds: []int{1059}, Tags: nostr.TagMap{"p": {w.person.pk}}}, "restricted:"},
		{"person_own_gift_wraps", &w.person, nostr.Filter{Kinds: []int{1059}, Tags: nostr.TagMap{"p": {w.person.pk}}}, ""},
		{"anon_config", nil, nostr.Filter{Tags: nostr.TagMap{"d": {"snowclaw:config:global"}}}, "auth-required:"},
		{"anon_public", nil, nostr.Filter{Kinds: []int{1}}, ""},
		{"search_not_yet", nil, nostr.Filter{Search: "plans"}, "blocked:"},
		{"bad_id", nil, nostr.Filter{IDs: []string{"xyz"}}, "invalid:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rc := w.raw()
			if tc.reader != nil {
				rc.auth(w.url, *tc.reader)
			}
			rc.send("REQ", "s", tc.filter)
			answer, ok := rc.waitAny("s", 5*time.Second, "EOSE", "CLOSED")
			if !ok {
				t.Fatalf("neither EOSE nor CLOSED; got:\n%s", rc.all())
			}
			if tc.closed == "" {
				// A connection's messages are answered in order, so once
				// a later REQ has its EOSE, nothing more comes for "s".
				rc.send("REQ", "barrier", nostr.Filter{Kinds: []int{1}, Limit: 1})
				if _, ok := rc.waitFor("EOSE", "barrier", 5*time.Second); !ok {
					t.Fatalf("no EOSE for the barrier; got:\n%s", rc.all())
				}
				if closed, isClosed := rc.waitFor("CLOSED", "s", 0); isClosed {
					t.Fatalf("CLOSED %s, want events", closed[2])
				}
				return
			}
			if label := string(answer[0]); label != `"CLOSED"` {
				t.Fatalf("%s, want CLOSED %q; got:\n%s", label, tc.closed, rc.all())
			}
			if !strings.Contains(string(answer[2]), `"`+tc.closed) {
				t.Fatalf("CLOSED %s, want prefix %q", answer[2], tc.closed)
			}
			if evs := rc.eventIDs("s"); len(evs) > 0 {
				t.Fatalf("CLOSED but %d events sent first", len(evs))
			}
		})
	}
}

// TestAccess_Live checks live broadcasts to subscriptions opened before the
// events exist, with and without limit:0, on raw connections that see
// every frame.
func TestAccess_Live(t *testing.T) {
	w := buildWorld(t)
	filter := nostr.Filter{Kinds: []int{1, 9, 30078, 1059}}
	zero := filter
	zero.LimitZero = true
	conns := map[string]*rawConn{}
	for name, u := range w.readers() {
		rc := w.raw()
		f, z := filter, zero
		if u != nil {
			rc.auth(w.url, *u)
		} else {
			// anonymous REQs naming kind 1059 are CLOSED auth-required
			// (TestAccess_Filters); ask for the rest
			f.Kinds, z.Kinds = []int{1, 9, 30078}, []int{1, 9, 30078}
		}
		rc.send("REQ", "live", f)
		rc.send("REQ", "zero", z)
		if _, ok := rc.waitFor("EOSE", "zero", 3*time.Second); !ok {
			t.Fatalf("%s: no EOSE for limit 0: %s", name, rc.all())
		}
		conns[name] = rc
	}
	// publish a fresh event of each class (new d tags so none replaces
	// the fixtures) and a public sentinel everyone must get last
	fresh := map[string]nostr.Event{}
	for name, evt := range w.events {
		author := map[string]user{w.member.pk: w.member, w.agent.pk: w.agent, w.owner.pk: w.owner}[evt.PubKey]
		if evt.Kind == 1059 {
			author = newUser()
		}
		tags := nostr.Tags{}
		replaces := strings.HasPrefix(evt.Tags.GetD(), "snowclaw:memory:npub:") // the d names the person
		for _, tg := range evt.Tags {
			if tg[0] == "d" && !replaces {
				tg = nostr.Tag{"d", tg[1] + "/live"}
			}
			tags = append(tags, tg)
		}
		if evt.Kind == 9 && (evt.Tags.Find("e") != nil || evt.Tags.Find("a") != nil) {
			continue // one chat message per group is enough
		}
		next := nostr.Event{Kind: evt.Kind, Tags: tags, Content: evt.Content + " live", CreatedAt: evt.CreatedAt + 1}
		next.Sign(author.sk)
		fresh[name] = w.mustPublish(w.connect(nil), next)
	}
	sentinel := w.mustPublish(w.connect(nil), mkEvent(newUser(), 1, nil, "sentinel"))
	for reader, rc := range conns {
		for _, sub := range []string{"live", "zero"} {
			waitEvent(t, rc.Client, sub, sentinel.ID)
			got := rc.eventIDs(sub)
			for name, evt := range fresh {
				t.Run(fmt.Sprintf("%s/%s/%s", name, reader, sub), func(t *testing.T) {
					if want := expectVisible(name, reader); got[evt.ID] != want {
						t.Fatalf("received=%v, want %v", got[evt.ID], want)
					}
				})
			}
		}
	}
}
