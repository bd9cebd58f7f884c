package search

import (
	"slices"
	"testing"
)

// A version learnt from someone else than the version it replaced is a
// conflict resolved by supersession (docs/api.md#get-apiv1conflictstopic):
// the current version in
// Docs, the replaced one in History, until something supersedes both.
func TestConflicts_VersionsLearntFromOthers(t *testing.T) {
	const agent, mallory = "agent", "mallory"
	v1 := Doc{ID: "v1", Pubkey: agent, Source: agent, Topic: "group/g/facts/v1", Text: "the launch is on May 3", LearntFrom: "alice", CreatedAt: 100}
	v2 := Doc{ID: "v2", Pubkey: agent, Source: agent, Topic: "group/g/facts/v2", Text: "the launch moved to May 10", LearntFrom: "bob",
		Version: 2, Supersedes: []string{"v1"}, CreatedAt: 200}
	with := func(d Doc, f func(*Doc)) Doc { f(&d); return d }
	for _, tc := range []struct {
		name         string
		docs         []Doc
		topic        string
		docs0, histo []string // the one conflict's Docs and History; nil = no conflict
	}{
		{"bob's version of alice's memory", []Doc{v1, v2}, "", []string{"v2"}, []string{"v1"}},
		{"by its topic", []Doc{v1, v2}, "group/g/facts/v2", []string{"v2"}, []string{"v1"}},
		{"not by the old topic", []Doc{v1, v2}, "group/g/facts/v1", nil, nil},
		{"alice corrects herself", []Doc{v1, with(v2, func(d *Doc) { d.LearntFrom = "ALICE" })}, "", nil, nil},
		{"old version's source unknown", []Doc{with(v1, func(d *Doc) { d.LearntFrom = "" }), v2}, "", nil, nil},
		{"new version's source unknown", []Doc{v1, with(v2, func(d *Doc) { d.LearntFrom = "" })}, "", nil, nil},
		{"same words", []Doc{v1, with(v2, func(d *Doc) { d.Text = "The launch is  on may 3" })}, "", nil, nil},
		{"not a version: a merge", []Doc{v1, with(v2, func(d *Doc) { d.Version = 0 })}, "", nil, nil},
		{"only the first supersedes is the version replaced", []Doc{v1, with(v2, func(d *Doc) { d.Supersedes = []string{"m0", "v1"} })}, "", nil, nil},
		{"another signer's event named", []Doc{with(v1, func(d *Doc) { d.Pubkey, d.Source = "carol", "carol" }),
			with(v2, func(d *Doc) { d.Pubkey, d.Source = mallory, mallory })}, "", nil, nil},
		{"the owner ruled: both superseded", []Doc{v1, v2,
			{ID: "r", Pubkey: agent, Source: agent, Topic: "launch", Text: "the launch moved to May 10", Supersedes: []string{"v2", "v1"}, CreatedAt: 300}}, "", nil, nil},
		{"beside a dispute on the same topic", []Doc{v1, v2,
			{ID: "x", Pubkey: "carol", Source: "carol", Topic: "group/g/facts/v2", Text: "the launch is cancelled", CreatedAt: 150}}, "", []string{"v2", "x"}, []string{"v1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := openTest(t, Options{})
			mustIndex(t, ix, tc.docs...)
			cs, err := ix.Conflicts(tc.topic, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.docs0 == nil {
				if len(cs) != 0 {
					t.Fatalf("unexpected conflicts %+v", cs)
				}
				return
			}
			if len(cs) != 1 || !slices.Equal(docIDsOf(cs[0].Docs), tc.docs0) || !slices.Equal(docIDsOf(cs[0].History), tc.histo) {
				t.Fatalf("conflicts %+v, want docs %v and history %v", cs, tc.docs0, tc.histo)
			}
		})
	}
}

// A version the reader may not read makes no conflict, and neither does
// the current one with a replaced version the reader may not read: a
// private memory learnt in a DM never shows in a group's dashboard.
func TestConflicts_HistoryOnlyAmongReadable(t *testing.T) {
	ix := openTest(t, Options{})
	mustIndex(t, ix,
		Doc{ID: "dm", Scope: "private:alice", Pubkey: "agent", Topic: "user/alice/notes/dm", Text: "the launch is on May 3", LearntFrom: "alice", Volatile: true, CreatedAt: 100},
		Doc{ID: "grp", Scope: "group:g", Pubkey: "agent", Topic: "group/g/facts/grp", Text: "the launch moved to May 10", LearntFrom: "bob",
			Version: 2, Supersedes: []string{"dm"}, CreatedAt: 200},
	)
	for name, readable := range map[string]func(string) bool{"group reader": only("group:g"), "public reader": only("public")} {
		if cs, err := ix.Conflicts("", readable, nil); err != nil || len(cs) != 0 {
			t.Fatalf("%s sees %+v (%v): made by a private memory it cannot read", name, cs, err)
		}
	}
	accept := func(d Doc) bool { return d.ID != "dm" }
	if cs, err := ix.Conflicts("", nil, accept); err != nil || len(cs) != 0 {
		t.Fatalf("a doc accept refuses still counts: %+v (%v)", cs, err)
	}
	if cs, err := ix.Conflicts("", only("group:g", "private:alice"), nil); err != nil || len(cs) != 1 || len(cs[0].History) != 1 {
		t.Fatalf("a reader of both: %+v (%v)", cs, err)
	}
}

func docIDsOf(docs []Doc) []string {
	var out []string
	for _, d := range docs {
		out = append(out, d.ID)
	}
	return out
}
