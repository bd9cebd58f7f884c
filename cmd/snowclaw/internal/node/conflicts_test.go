package node_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"
	"github.com/snowclaw/snowclaw"
	memsvc "github.com/snowclaw/snowclaw/plugins/memory"
)

type conflictList struct {
	Conflicts []memsvc.ConflictView `json:"conflicts"`
}

func (e *testEnv) conflicts(u *user, topic string) []memsvc.ConflictView {
	e.t.Helper()
	var l conflictList
	if code, msg := e.v1(u, "GET", "/api/v1/conflicts?topic="+topic, nil, &l); code != 200 {
		e.t.Fatalf("conflicts %q: %d %s", topic, code, msg)
	}
	return l.Conflicts
}

// deployConflict: two public memories from two sources that disagree.
func deployConflict(e *testEnv) (a, b user, fromA, fromB nostr.Event) {
	a, b = newUser(), newUser()
	c := e.connect(nil)
	fromA = e.mustPublish(c, memory(a, "ops/deploy-day", `{"summary":"deploy day is tuesday"}`, nostr.Tag{"t", "ops"}, nostr.Tag{"snow:model", "anthropic/claude-opus-4"}, nostr.Tag{"snow:confidence", "0.9"}))
	// B's is older: only trust can put it first
	older := memory(b, "ops/deploy-day", `{"summary":"deploy day is friday"}`, nostr.Tag{"t", "ops"})
	older.CreatedAt -= 10
	older.Sign(b.sk)
	fromB = e.mustPublish(c, older)
	return
}

func TestConflicts_ListedPerReader(t *testing.T) {
	w := buildWorldWith(t, withSearch)
	a, b, _, _ := deployConflict(w.testEnv)
	ga := w.mustPublish(w.connect(&w.member), mkEvent(w.member, 30078, nostr.Tags{{"d", "snow:memory:group/priv/launch"}, {"h", privGroup}}, "launch on monday"))
	gb := w.mustPublish(w.connect(&w.agent), mkEvent(w.agent, 30078, nostr.Tags{{"d", "snow:memory:group/priv/launch"}, {"h", privGroup}}, "launch on sunday"))
	w.mustPublish(w.connect(&w.owner), preferenceConfig(w.owner, nostr.Now()+1, false, npub(b), npub(a)))

	for _, tc := range []struct {
		name   string
		reader *user
		topics []string
	}{
		{"non-member", &w.nonMember, []string{"ops/deploy-day"}},
		{"member", &w.member, []string{"group/priv/launch", "ops/deploy-day"}},
		{"owner", &w.owner, []string{"group/priv/launch", "ops/deploy-day"}},
	} {
		cs := w.conflicts(tc.reader, "")
		var topics []string
		for _, c := range cs {
			topics = append(topics, c.Topic)
			if len(c.Memories) != 2 || c.Flagged {
				t.Errorf("%s: %s has %d memories (flagged %v), want 2 unflagged", tc.name, c.Topic, len(c.Memories), c.Flagged)
			}
			if c.Topic == "ops/deploy-day" && (c.Memories[0].Source != npub(b) || c.Memories[0].Text != "deploy day is friday") {
				t.Errorf("%s: first memory %+v, want B's (first in the list)", tc.name, c.Memories[0])
			}
			if c.Topic == "group/priv/launch" && (!slices.Contains(viewIDs(c.Memories), ga.ID) || !slices.Contains(viewIDs(c.Memories), gb.ID)) {
				t.Errorf("%s: group conflict %v, want %s and %s", tc.name, viewIDs(c.Memories), ga.ID[:8], gb.ID[:8])
			}
		}
		if !slices.Equal(topics, tc.topics) {
			t.Errorf("%s sees %v, want %v", tc.name, topics, tc.topics)
		}
	}
	if cs := w.conflicts(&w.member, "group/priv/launch"); len(cs) != 1 || cs[0].Topic != "group/priv/launch" {
		t.Errorf("topic filter: %+v", cs)
	}
	if code, _ := w.v1(nil, "GET", "/api/v1/conflicts", nil, nil); code != 401 {
		t.Errorf("conflicts without auth: %d, want 401", code)
	}
}

func TestConflicts_ResolveWithWinner(t *testing.T) {
	e := startEnv(t, withSearch)
	a, _, fromA, fromB := deployConflict(e)
	stranger := newUser()
	for _, tc := range []struct {
		name   string
		u      *user
		body   map[string]any
		status int
	}{
		{"no auth", nil, map[string]any{"topic": "ops/deploy-day", "winner": fromA.ID}, 401},
		{"not the owner", &stranger, map[string]any{"topic": "ops/deploy-day", "winner": fromA.ID}, 403},
		{"winner not in the conflict", &e.owner, map[string]any{"topic": "ops/deploy-day", "winner": strings.Repeat("ab", 32)}, 400},
		{"winner and flag", &e.owner, map[string]any{"topic": "ops/deploy-day", "winner": fromA.ID, "flag": true}, 400},
		{"no topic", &e.owner, map[string]any{"winner": fromA.ID}, 400},
		{"no conflict there", &e.owner, map[string]any{"topic": "ops/other", "winner": fromA.ID}, 404},
	} {
		if code, msg := e.v1(tc.u, "POST", "/api/v1/conflicts/resolve", tc.body, nil); code != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, code, msg, tc.status)
		}
	}
	if len(e.conflicts(&e.owner, "ops/deploy-day")) != 1 {
		t.Fatal("a refused resolve changed the conflict")
	}

	var res memsvc.ResolveResult
	if code, msg := e.v1(&e.owner, "POST", "/api/v1/conflicts/resolve", map[string]any{"topic": "ops/deploy-day", "winner": fromA.ID}, &res); code != 200 {
		t.Fatalf("resolve: %d %s", code, msg)
	}
	m := res.Memory
	if m == nil || m.Pubkey != e.agent.pk || m.Text != "deploy day is tuesday" || m.Source != npub(a) || m.Model != "anthropic/claude-opus-4" ||
		m.Confidence != 0.9 || !slices.Equal(m.Tags, []string{"ops"}) || m.Tier != snowclaw.TierPublic {
		t.Fatalf("new memory %+v, want the agent's copy of A's", m)
	}
	if !slices.Contains(m.Supersedes, fromA.ID) || !slices.Contains(m.Supersedes, fromB.ID) {
		t.Fatalf("supersedes %v, want both memories", m.Supersedes)
	}
	if got := search(t, e, nil, nostr.Filter{Search: "deploy day"}); len(got) != 1 || got[0].ID != m.ID {
		t.Fatalf("search after resolve %v, want only %s", ids(got), m.ID[:8])
	}
	if got := search(t, e, nil, nostr.Filter{Search: "deploy day include:superseded"}); !contains(got, fromB.ID) {
		t.Fatalf("include:superseded %v lacks the loser", ids(got))
	}
	var detail snowclaw.MemoryDetail
	if code, msg := e.v1(&stranger, "GET", "/api/v1/memories/"+fromB.ID, nil, &detail); code != 200 || !slices.Contains(detail.Memory.SupersededBy, m.ID) {
		t.Fatalf("loser detail %d %s: superseded_by %v, want %s", code, msg, detail.Memory.SupersededBy, m.ID[:8])
	}
	if cs := e.conflicts(&e.owner, "ops/deploy-day"); len(cs) != 0 {
		t.Fatalf("conflict still listed: %+v", cs)
	}
}

func TestConflicts_Flag(t *testing.T) {
	e := startEnv(t, withSearch)
	_, _, fromA, fromB := deployConflict(e)
	var res memsvc.ResolveResult
	if code, msg := e.v1(&e.owner, "POST", "/api/v1/conflicts/resolve", map[string]any{"topic": "ops/deploy-day", "flag": true}, &res); code != 200 || !res.Flagged || len(res.Labels) != 1 {
		t.Fatalf("flag: %d %s %+v", code, msg, res)
	}
	reader := newUser()
	if cs := e.conflicts(&reader, ""); len(cs) != 1 || !cs[0].Flagged {
		t.Fatalf("after flag: %+v, want flagged", cs)
	}
	labels := mustFetch(t, e.connect(nil), nostr.Filter{Kinds: []int{1985}, Authors: []string{e.agent.pk}})
	if len(labels) != 1 || labels[0].ID != res.Labels[0] || !hasTag(labels[0], "L", "snow.conflict") ||
		!hasTag(labels[0], "e", fromA.ID) || !hasTag(labels[0], "e", fromB.ID) || labels[0].Tags.FindWithValue("l", "flagged") == nil {
		t.Fatalf("label events %v", labels)
	}
	if code, msg := e.v1(&e.owner, "POST", "/api/v1/conflicts/resolve", map[string]any{"topic": "ops/deploy-day", "flag": false}, &res); code != 200 || res.Flagged {
		t.Fatalf("unflag: %d %s %+v", code, msg, res)
	}
	if cs := e.conflicts(&e.owner, ""); len(cs) != 1 || cs[0].Flagged {
		t.Fatalf("after unflag: %+v, want unflagged", cs)
	}
	// a label anyone else signs does not flag
	fake := newUser()
	e.mustPublish(e.connect(nil), mkEvent(fake, 1985, nostr.Tags{{"L", "snow.conflict"}, {"l", "flagged", "snow.conflict"}, {"e", fromA.ID}}, ""))
	if cs := e.conflicts(&e.owner, ""); len(cs) != 1 || cs[0].Flagged {
		t.Fatalf("a stranger's label flagged the conflict: %+v", cs)
	}
}

// TestConflicts_ResolveRefusals: an encrypted winner cannot be copied, and
// a group winner cannot retire a memory more people read.
func TestConflicts_ResolveRefusals(t *testing.T) {
	w := buildWorldWith(t, withSearch)
	c := w.connect(nil)
	pub := w.mustPublish(c, memory(newUser(), "ops/port", "the port is 80"))
	grp := w.mustPublish(w.connect(&w.agent), mkEvent(w.agent, 30078, nostr.Tags{{"d", "snow:memory:ops/port"}, {"h", privGroup}}, "the port is 81"))
	key, _ := nip44.GenerateConversationKey(w.agent.pk, w.owner.sk)
	secret, _ := nip44.Encrypt("the port is 82", key)
	priv := w.mustPublish(w.connect(&w.owner), mkEvent(w.owner, 30078, nostr.Tags{{"d", "snow:memory:ops/port"}, {"p", w.owner.pk}, {"encrypted", "nip44"}}, secret))
	if cs := w.conflicts(&w.owner, "ops/port"); len(cs) != 1 || len(cs[0].Memories) != 3 {
		t.Fatalf("owner's conflict %+v, want the three memories", cs)
	}
	for _, tc := range []struct {
		name   string
		winner string
		want   string
	}{
		{"encrypted winner", priv.ID, "invalid: the winner is an encrypted"},
		{"group winner over public", grp.ID, "invalid: the winner is readable in group"},
	} {
		code, msg := w.v1(&w.owner, "POST", "/api/v1/conflicts/resolve", map[string]any{"topic": "ops/port", "winner": tc.winner}, nil)
		if code != 400 || !strings.HasPrefix(msg, tc.want) {
			t.Errorf("%s: %d %q, want 400 %q", tc.name, code, msg, tc.want)
		}
	}
	var res memsvc.ResolveResult
	if code, msg := w.v1(&w.owner, "POST", "/api/v1/conflicts/resolve", map[string]any{"topic": "ops/port", "winner": pub.ID}, &res); code != 200 || len(res.Superseded) != 3 {
		t.Fatalf("public winner: %d %s %+v", code, msg, res)
	}
	if got := search(t, w.testEnv, &w.member, nostr.Filter{Search: "port"}); len(got) != 1 || got[0].ID != res.Memory.ID {
		t.Fatalf("member's search %v, want only the resolution", ids(got))
	}
}
