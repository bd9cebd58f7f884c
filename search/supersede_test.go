package search

import (
	"slices"
	"testing"
)

// TestSupersedes_OnlyAuthorOrCurator: a doc is hidden as an old version
// only when its own author or a curator (the agent, the owner) names it in
// snow:supersedes; a stranger naming it buries nothing.
func TestSupersedes_OnlyAuthorOrCurator(t *testing.T) {
	for _, tc := range []struct {
		name, by string
		hidden   bool
	}{
		{"stranger", "mallory", false},
		{"own_author", "alice", true},
		{"curator", "agent", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := openTest(t, Options{Curators: []string{"agent"}})
			mustIndex(t, ix,
				Doc{ID: "old", Kind: 30078, Pubkey: "alice", Text: "the launch window opens at dawn", CreatedAt: 100},
				Doc{ID: "new", Kind: 30078, Pubkey: tc.by, Text: "the launch window opens at dusk", CreatedAt: 200, Supersedes: []string{"old"}},
			)
			got := ids(search(t, ix, Query{Text: "launch window", Limit: 10}))
			if slices.Contains(got, "old") == tc.hidden {
				t.Fatalf("superseded by %s: results %v, want old hidden=%v", tc.by, got, tc.hidden)
			}
			all := ids(search(t, ix, Query{Text: "launch window", Limit: 10, IncludeSuperseded: true}))
			if !slices.Contains(all, "old") {
				t.Fatalf("include:superseded lost the old version: %v", all)
			}
		})
	}
}
