package node_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	agentmem "github.com/snowclaw/snowclaw/agent/memory"
	memsvc "github.com/snowclaw/snowclaw/plugins/memory"
)

// launchScript: alice says when the launch is, bob says it moved (an
// UPDATE of alice's memory) and later insists (an ADD of the same
// memory), alice moves from Paris to Berlin (an UPDATE of her own).
func launchScript() *learnScript {
	return &learnScript{
		rules: []learnRule{
			{trigger: "launch is on May 3", text: "the launch is on May 3", kind: "fact", about: "conversation"},
			{trigger: "launch moved to May 10", text: "the launch is on May 10", kind: "fact", about: "conversation"},
			{trigger: "I live in Paris", text: "alice lives in Paris", kind: "fact"},
			{trigger: "moved to Berlin", text: "alice lives in Berlin", kind: "fact"},
			// the same memory as bob's, worded so that it is added, not
			// an update
			{trigger: "really is may 10", text: "The launch is ON may 10!", kind: "fact", about: "conversation"},
		},
		updateTo: map[string]string{"on May 10": "May 3", "Berlin": "Paris"},
	}
}

// itemEvent is the stored event of one of the agent's items.
func (e *agentEnv) itemEvent(it agentmem.Item) *nostr.Event {
	e.t.Helper()
	if err := e.n.Agent().Flush(e.t.Context()); err != nil {
		e.t.Fatal(err)
	}
	evs, _ := fetch(e.t, e.connect(&e.agent), nostr.Filter{Kinds: []int{30078}, Authors: []string{e.agent.pk}, Tags: nostr.TagMap{"d": {snowclaw.PrefixMemoryItem + it.Topic}}})
	if len(evs) != 1 {
		e.t.Fatalf("item %s (%s): %d events", it.ID, it.Topic, len(evs))
	}
	return evs[0]
}

// explainConflicts runs a search with explain:true as u over a raw
// socket and returns each result's conflicts_with.
func (e *testEnv) explainConflicts(u user, q string) map[string][]string {
	e.t.Helper()
	rc := e.raw()
	rc.auth("", u)
	rc.send("REQ", "x", nostr.Filter{Search: q + " explain:true"})
	rc.waitFor("EOSE", "x", 3*time.Second)
	var body struct {
		Results []struct {
			ID            string   `json:"id"`
			ConflictsWith []string `json:"conflicts_with"`
		} `json:"results"`
	}
	out := map[string][]string{}
	for _, n := range rc.Notices() {
		if json.Unmarshal([]byte(n), &body) == nil {
			for _, r := range body.Results {
				out[r.ID] = r.ConflictsWith
			}
		}
	}
	return out
}

// A new version learnt from bob of a memory the agent learnt
// from alice is no silent overwrite. The conflict dashboard lists it, over
// the HTTP API and in a search's explain, with both sources: the current
// version first, the replaced one as history, until the owner rules.
// alice correcting herself is no conflict.
func TestLearn_VersionFromAnotherPersonInConflictDashboard(t *testing.T) {
	e := startLearnEnv(t, launchScript())
	e.say(e.ac, e.alice, "team: the launch is on May 3")
	e.settle()
	e.say(e.bc, e.bob, "heads up, the launch moved to May 10")
	e.settle()
	e.say(e.ac, e.alice, "hi all, I live in Paris")
	e.settle()
	e.say(e.ac, e.alice, "news: I moved to Berlin last month")
	e.settle()

	may10, berlin := e.itemsWhere("May 10"), e.itemsWhere("Berlin")
	if len(may10) != 1 || may10[0].Version != 2 || len(e.itemsWhere("May 3")) != 0 {
		t.Fatalf("bob's version: %+v (items %+v)", may10, e.n.Agent().Items())
	}
	if len(berlin) != 1 || berlin[0].Version != 2 {
		t.Fatalf("alice's own correction: %+v", berlin)
	}
	cur := e.itemEvent(may10[0])
	old := may10[0].Supersedes
	if snowclaw.LearntFrom(cur) != e.bob.pk {
		t.Fatalf("the new version names %q as its source, want bob", snowclaw.LearntFrom(cur))
	}

	check := func(who string, u *user) memsvc.ConflictView {
		t.Helper()
		cs := e.conflicts(u, "")
		if len(cs) != 1 {
			t.Fatalf("%s's dashboard: %+v, want the launch only (alice's own correction is none)", who, cs)
		}
		c := cs[0]
		if c.Topic != may10[0].Topic || !c.ResolvedBySupersession || len(c.Memories) != 2 {
			t.Fatalf("%s's conflict %+v, want the current version's topic %s resolved by supersession", who, c, may10[0].Topic)
		}
		now, was := c.Memories[0], c.Memories[1]
		if now.ID != cur.ID || now.LearntFrom != npub(e.bob) || len(now.SupersededBy) != 0 || !strings.Contains(now.Text, "May 10") {
			t.Fatalf("%s: first memory %+v, want the current version learnt from bob", who, now)
		}
		if was.ID != old || was.LearntFrom != npub(e.alice) || !slices.Equal(was.SupersededBy, []string{cur.ID}) || !strings.Contains(was.Text, "May 3") {
			t.Fatalf("%s: second memory %+v, want alice's, marked superseded by %s", who, was, cur.ID[:8])
		}
		return c
	}
	check("bob", &e.bob)
	check("alice", &e.alice)
	check("the owner", &e.owner)
	if cs := e.conflicts(&e.bob, berlin[0].Topic); len(cs) != 0 {
		t.Fatalf("alice's correction of herself is listed: %+v", cs)
	}
	stranger := newUser()
	if cs := e.conflicts(&stranger, ""); len(cs) != 0 {
		t.Fatalf("a stranger sees the group's conflict: %+v", cs)
	}
	// a search's explain names the replaced version beside the current one
	if with := e.explainConflicts(e.bob, "launch"); !slices.Equal(with[cur.ID], []string{old}) {
		t.Fatalf("explain conflicts_with = %v, want %s for %s", with, old[:8], cur.ID[:8])
	}

	// the owner rules for alice: a copy of hers supersedes both, and the
	// conflict is gone
	var res memsvc.ResolveResult
	if code, msg := e.v1(&e.owner, "POST", "/api/v1/conflicts/resolve", map[string]any{"topic": may10[0].Topic, "winner": old}, &res); code != 200 {
		t.Fatalf("resolve: %d %s", code, msg)
	}
	if res.Memory == nil || !strings.Contains(res.Memory.Text, "May 3") || !slices.Contains(res.Superseded, cur.ID) || !slices.Contains(res.Superseded, old) {
		t.Fatalf("ruling %+v, want a copy of alice's superseding both", res)
	}
	if cs := e.conflicts(&e.owner, ""); len(cs) != 0 {
		t.Fatalf("still listed after the ruling: %+v", cs)
	}
	// the agent holds the ruling's side only: the ruled-out version left
	// its memory, and no flush writes it back over the ruling
	if left := e.itemsWhere("May 10"); len(left) != 0 {
		t.Fatalf("the agent still holds the ruled-out version: %+v", left)
	}
	if err := e.n.Agent().Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	ruling := func(when string) {
		t.Helper()
		got := search(t, e.testEnv, &e.bob, nostr.Filter{Search: "launch May"})
		if !contains(got, res.Memory.ID) || contains(got, cur.ID) || contains(got, old) {
			t.Fatalf("search %s: %v, want %s and neither version", when, ids(got), res.Memory.ID[:8])
		}
		if cs := e.conflicts(&e.owner, ""); len(cs) != 0 {
			t.Fatalf("conflicts %s: %+v", when, cs)
		}
	}
	ruling("after the ruling")
	// bob insists: the agent learns the same memory again, but never writes
	// it at the address the ruling holds, now or after a restart
	e.say(e.bc, e.bob, "no really, the launch really is may 10")
	e.settle()
	if err := e.n.Agent().Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	ruling("after bob insists")
	e.restart()
	e.ac, e.bc = e.connect(&e.alice), e.connect(&e.bob)
	e.say(e.bc, e.bob, "I insist, the launch really is may 10")
	e.settle()
	if err := e.n.Agent().Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	ruling("after a restart and bob insisting again")
}

// Attack: a memory learnt in alice's private conversation never makes or
// shows in a conflict of a reader who may not read it, even when a group
// memory names it as the version it replaced with another source (as a
// model steering the agent across scopes, or a forged history, would).
func TestAttack_PrivateLearntMemoryNeverInGroupDashboard(t *testing.T) {
	e := startLearnEnv(t, launchScript())
	e.dm(e.alice, "between us: the launch is on May 3")
	e.settle()
	priv := e.itemsWhere("May 3")
	if len(priv) != 1 || priv[0].Tier != snowclaw.TierPrivate || priv[0].Subject != e.alice.pk {
		t.Fatalf("alice's private memory: %+v", priv)
	}
	pe := e.itemEvent(priv[0])
	if snowclaw.LearntFrom(pe) != e.alice.pk {
		t.Fatalf("the private memory names %q as its source, want alice", snowclaw.LearntFrom(pe))
	}
	grp := e.mustPublish(e.connect(&e.agent), mkEvent(e.agent, 30078, nostr.Tags{
		{"d", snowclaw.PrefixMemoryItem + "group/" + agentGroup + "/facts/forged"}, {"h", agentGroup},
		{"snow:version", "2"}, {"snow:supersedes", pe.ID}, {snowclaw.TagLearntFrom, e.bob.pk},
	}, `{"summary":"the launch moved to May 10"}`))
	e.settle()

	stranger := newUser()
	for name, u := range map[string]*user{"bob (member)": &e.bob, "the owner": &e.owner, "a stranger": &stranger} {
		if cs := e.conflicts(u, ""); len(cs) != 0 {
			t.Errorf("%s sees %+v: made by alice's private memory", name, cs)
		}
	}
	with := e.explainConflicts(e.bob, "launch")
	if _, ok := with[grp.ID]; !ok {
		t.Fatalf("bob's search did not return the group memory: %v", with)
	}
	if len(with[grp.ID]) != 0 {
		t.Fatalf("bob's explain names %v beside the group memory: alice's private memory", with[grp.ID])
	}
	// alice reads both: to her it is a conflict, with both sources
	cs := e.conflicts(&e.alice, "")
	if len(cs) != 1 || len(cs[0].Memories) != 2 || cs[0].Memories[1].ID != pe.ID || cs[0].Memories[1].LearntFrom != npub(e.alice) {
		t.Fatalf("alice's dashboard: %+v, want the group memory and her own private one", cs)
	}
}
