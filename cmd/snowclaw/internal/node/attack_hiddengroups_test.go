package node_test

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/internal/wsclient"
)

// Finding 15: a hidden group's existence showed through the difference
// between "there is no group X" and "not a member". Every answer a
// non-member gets about a hidden group must be the one a made-up id gets.

// answers collects, for group g, what a stranger (or an anonymous
// client, stranger nil) is told on every path, with g replaced by "G".
func answers(t *testing.T, e *testEnv, stranger *user, g string) map[string]string {
	t.Helper()
	c := e.connect(stranger)
	out := make(map[string]string)
	norm := func(s string) string { return strings.ReplaceAll(s, g, "G") }
	_, closed := fetch(t, c, nostr.Filter{Tags: nostr.TagMap{"h": {g}}})
	out["REQ #h"] = norm(closed)
	_, closed = fetch(t, c, nostr.Filter{Kinds: []int{9, 30078}, Tags: nostr.TagMap{"h": {g}}})
	out["REQ #h memories"] = norm(closed)
	meta, closed := fetch(t, c, nostr.Filter{Kinds: []int{39000, 39001, 39002}, Tags: nostr.TagMap{"d": {g}}})
	out["REQ metadata"] = norm(closed) + " events:" + strings.Repeat("x", len(meta))
	n, closed := count(t, c, nostr.Filter{Tags: nostr.TagMap{"h": {g}}})
	out["COUNT #h"] = norm(closed) + " n:" + strings.Repeat("x", int(n))
	if stranger == nil {
		return out
	}
	for name, evt := range map[string]nostr.Event{
		"EVENT chat":           mkEvent(*stranger, 9, nostr.Tags{{"h", g}}, "hello?"),
		"EVENT memory":         mkEvent(*stranger, 30078, nostr.Tags{{"d", "snow:memory:x"}, {"h", g}}, "note"),
		"join":                 mkEvent(*stranger, 9021, nostr.Tags{{"h", g}}, ""),
		"join with a code":     mkEvent(*stranger, 9021, nostr.Tags{{"h", g}, {"code", "guess"}}, ""),
		"leave":                mkEvent(*stranger, 9022, nostr.Tags{{"h", g}}, ""),
		"put-user":             mkEvent(*stranger, 9000, nostr.Tags{{"h", g}, {"p", stranger.pk}}, ""),
		"create-invite":        mkEvent(*stranger, 9009, nostr.Tags{{"h", g}, {"code", "mine"}}, ""),
		"edit-metadata":        mkEvent(*stranger, 9002, nostr.Tags{{"h", g}, {"name", "x"}}, ""),
		"delete-group":         mkEvent(*stranger, 9008, nostr.Tags{{"h", g}}, ""),
		"delete-event (nip29)": mkEvent(*stranger, 9005, nostr.Tags{{"h", g}, {"e", strings.Repeat("0", 64)}}, ""),
	} {
		if err := publish(c, evt); err != nil {
			out[name] = norm(err.Error())
		} else {
			out[name] = "accepted"
		}
	}
	return out
}

func TestAttack_HiddenGroup_SameAnswerAsMissing(t *testing.T) {
	e := startEnv(t)
	member, stranger := newUser(), newUser()
	c := e.connect(nil)
	// a hidden closed private group, and a hidden closed group that is
	// public (its chat would otherwise be served to anyone). A hidden
	// group that is not closed takes a join from whoever knows its id
	// (NIP-29: hidden hides the metadata; closed is what needs a code),
	// so that join answers differently (TestNIP29_HiddenIsNotClosed).
	e.mustPublish(c, mkEvent(e.owner, 9007, nostr.Tags{{"h", "hid"}, {"hidden"}, {"closed"}}, ""))
	e.mustPublish(c, mkEvent(e.owner, 9007, nostr.Tags{{"h", "hidopen"}, {"hidden"}, {"public"}, {"closed"}}, ""))
	e.mustPublish(c, mkEvent(e.owner, 9000, nostr.Tags{{"h", "hid"}, {"p", member.pk}}, ""))
	e.mustPublish(c, mkEvent(e.owner, 9000, nostr.Tags{{"h", "hidopen"}, {"p", member.pk}}, ""))
	e.waitMembers("hid", e.owner.pk, member.pk)
	e.waitMembers("hidopen", e.owner.pk, member.pk)
	msg := e.mustPublish(c, mkEvent(member, 9, nostr.Tags{{"h", "hidopen"}}, "we are here"))

	for _, who := range []*user{&stranger, nil} {
		missing := answers(t, e, who, "nosuch")
		t.Logf("%s is told about a missing group: %q", whoName(who), missing)
		for _, g := range []string{"hid", "hidopen"} {
			hidden := answers(t, e, who, g)
			for path, want := range missing {
				if hidden[path] != want {
					t.Errorf("%s on %s: hidden group answers %q, a missing one %q", whoName(who), path, hidden[path], want)
				}
				if who != nil && want == "accepted" {
					t.Errorf("%s on %s: a missing group accepted the event", whoName(who), path)
				}
			}
		}
	}
	// the stranger still learnt nothing: not a member of either, and the
	// hidden group's message is served to nobody else
	e.waitMembers("hid", e.owner.pk, member.pk)
	e.waitMembers("hidopen", e.owner.pk, member.pk)
	for _, u := range []*user{&stranger, nil} {
		if got, _ := fetch(t, e.connect(u), nostr.Filter{IDs: []string{msg.ID}}); len(got) != 0 {
			t.Fatalf("%s reads a message of a hidden group", whoName(u))
		}
	}
	if got, _ := fetch(t, e.connect(&member), nostr.Filter{Tags: nostr.TagMap{"h": {"hidopen"}}, Kinds: []int{9}}); !contains(got, msg.ID) {
		t.Fatal("a member of the hidden group does not read its message")
	}
}

func whoName(u *user) string {
	if u == nil {
		return "anonymous"
	}
	return "stranger"
}

// TestAttack_HiddenGroup_JoinByInvite: a hidden closed group is joined
// with a valid invite code (whoever has one was told it exists), and
// without one is answered as a missing group; visible groups join as
// before: open ones freely, closed ones with a code.
func TestAttack_HiddenGroup_JoinByInvite(t *testing.T) {
	e := startEnv(t)
	alice, bob, carol, dave := newUser(), newUser(), newUser(), newUser()
	c := e.connect(nil)
	e.mustPublish(c, mkEvent(e.owner, 9007, nostr.Tags{{"h", "hid"}, {"hidden"}, {"closed"}}, ""))
	e.mustPublish(c, mkEvent(e.owner, 9007, nostr.Tags{{"h", "vis"}, {"closed"}}, ""))
	e.mustPublish(c, mkEvent(e.owner, 9007, nostr.Tags{{"h", "pub"}, {"public"}, {"open"}}, ""))
	e.mustPublish(c, mkEvent(e.owner, 9009, nostr.Tags{{"h", "hid"}, {"code", "h1"}}, ""))
	e.mustPublish(c, mkEvent(e.owner, 9009, nostr.Tags{{"h", "vis"}, {"code", "v1"}}, ""))

	e.refusedWith(c, mkEvent(alice, 9021, nostr.Tags{{"h", "hid"}}, ""), "restricted: group hid does not exist or is for members only")
	e.mustPublish(c, mkEvent(alice, 9021, nostr.Tags{{"h", "hid"}, {"code", "h1"}}, ""))
	e.refusedWith(c, mkEvent(bob, 9021, nostr.Tags{{"h", "vis"}}, ""), "restricted: group vis is closed; ask an admin for an invite code")
	e.mustPublish(c, mkEvent(bob, 9021, nostr.Tags{{"h", "vis"}, {"code", "v1"}}, ""))
	e.mustPublish(c, mkEvent(carol, 9021, nostr.Tags{{"h", "pub"}}, ""))
	e.waitMembers("hid", e.owner.pk, alice.pk)
	// a member knows the group and is told so
	e.refusedWith(c, mkEvent(alice, 9021, nostr.Tags{{"h", "hid"}}, "again"), "duplicate: you are already a member of group hid")
	e.waitMembers("vis", e.owner.pk, bob.pk)
	e.waitMembers("pub", e.owner.pk, carol.pk)
	// a member of a visible group is told what to do, as before
	var got *wsclient.Client = e.connect(&dave)
	if _, closed := fetch(t, got, nostr.Filter{Tags: nostr.TagMap{"h": {"vis"}}}); closed != "restricted: you are not a member of group vis" {
		t.Fatalf("non-member REQ on a visible private group: %q", closed)
	}
	e.refusedWith(c, mkEvent(dave, 9, nostr.Tags{{"h", "vis"}}, "hi"), "restricted: you are not a member of group vis; send a join request")
}
