package node_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
	"github.com/snowclaw/snowclaw"
)

func TestAPIv1_ListFiltersAndSuperseded(t *testing.T) {
	e := startAgentEnv(t)
	carol := newUser()
	cc := e.connect(&carol)
	at := nostr.Now() - 100 // one second apart, so newest first is one order
	fuel := e.mustPublish(e.ac, memoryAt(e.alice, at, "project/moon/fuel", `{"summary":"fuel margins are thin"}`, nostr.Tag{"t", "project"}))
	crew := e.mustPublish(e.ac, memoryAt(e.alice, at+1, "project/moon/crew", `{"summary":"crew of four"}`, nostr.Tag{"h", agentGroup}))
	soup := e.mustPublish(e.bc, memoryAt(e.bob, at+2, "recipes/soup", "leek soup needs an hour"))
	v1 := e.mustPublish(e.ac, memoryAt(e.alice, at+3, "project/moon/date", `{"summary":"launch in March"}`))
	v2 := e.mustPublish(e.ac, memoryAt(e.alice, at+4, "project/moon/date-2", `{"summary":"launch in April"}`, nostr.Tag{"snow:supersedes", v1.ID}, nostr.Tag{"snow:version", "2"}))
	// a stranger cannot retire alice's memory by naming it
	e.mustPublish(cc, memoryAt(carol, at-1, "project/moon/fuel-fake", `{"summary":"fuel is fine"}`, nostr.Tag{"snow:supersedes", fuel.ID}))

	bobNpub, _ := nip19.EncodePublicKey(e.bob.pk)
	for _, c := range []struct {
		name, query string
		reader      *user
		want        []string // exactly these among the test's memories
	}{
		{"tier group", "?tier=group", &e.bob, []string{crew.ID}},
		{"tier public topic", "?tier=public&topic=project/moon", &e.bob, []string{fuel.ID, v2.ID}},
		{"topic", "?topic=project/moon", &e.bob, []string{fuel.ID, crew.ID, v2.ID}},
		{"group", "?group=" + agentGroup, &e.bob, []string{crew.ID}},
		{"source", "?source=" + bobNpub, &e.alice, []string{soup.ID}},
		{"superseded included", "?topic=project/moon/date&include_superseded=1", &e.bob, []string{v1.ID, v2.ID}},
		{"non-member", "?topic=project/moon", &carol, []string{fuel.ID, v2.ID}},
		{"limit", "?topic=project/moon&limit=1", &e.bob, []string{v2.ID}},
		{"until", "?topic=project/moon&until=" + strconv.Itoa(int(at+1)), &e.bob, []string{fuel.ID, crew.ID}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := viewIDs(e.list(c.reader, c.query))
			var mine []string
			for _, id := range got {
				if slices.Contains([]string{fuel.ID, crew.ID, soup.ID, v1.ID, v2.ID}, id) {
					mine = append(mine, id)
				}
			}
			slices.Sort(mine)
			want := slices.Clone(c.want)
			slices.Sort(want)
			if !slices.Equal(mine, want) {
				t.Fatalf("got %v, want %v", mine, want)
			}
		})
	}
	all := e.list(&e.bob, "?include_superseded=true")
	if old, ok := findView(all, v1.ID); !ok || !slices.Equal(old.SupersededBy, []string{v2.ID}) {
		t.Fatalf("superseded version: %s", mustJSON(old))
	}
	if cur, _ := findView(all, v2.ID); cur.Version != 2 || !slices.Equal(cur.Supersedes, []string{v1.ID}) || len(cur.SupersededBy) != 0 {
		t.Fatalf("current version: %s", mustJSON(cur))
	}
	if code, _ := e.v1(&e.bob, "GET", "/api/v1/memories?tier=secret", nil, nil); code != 400 {
		t.Fatalf("bad tier: %d", code)
	}
}

func TestAPIv1_GetHistory(t *testing.T) {
	e := startAgentEnv(t)
	carol := newUser()
	v1 := e.mustPublish(e.ac, memory(e.alice, "group/agentroom/fuel", `{"summary":"we use kerosene"}`, nostr.Tag{"h", agentGroup}))
	v2 := e.mustPublish(e.ac, memory(e.alice, "group/agentroom/fuel-2", `{"summary":"we use methane","detail":"switched after the test burn"}`,
		nostr.Tag{"h", agentGroup}, nostr.Tag{"snow:supersedes", v1.ID}, nostr.Tag{"snow:version", "2"}))

	var d snowclaw.MemoryDetail
	if code, msg := e.v1(&e.bob, "GET", "/api/v1/memories/"+v2.ID, nil, &d); code != 200 {
		t.Fatalf("get v2: %d %s", code, msg)
	}
	if d.Memory.ID != v2.ID || d.Memory.Text != "we use methane" || d.Memory.Detail != "switched after the test burn" || d.Event == nil || d.Event.ID != v2.ID {
		t.Fatalf("v2: %s", mustJSON(d))
	}
	if len(d.History) != 1 || d.History[0].ID != v1.ID || d.History[0].Text != "we use kerosene" || len(d.SupersededBy) != 0 {
		t.Fatalf("v2 history: %s", mustJSON(d))
	}
	d = snowclaw.MemoryDetail{}
	if code, msg := e.v1(&e.bob, "GET", "/api/v1/memories/"+v1.ID, nil, &d); code != 200 {
		t.Fatalf("get v1: %d %s", code, msg)
	}
	if len(d.SupersededBy) != 1 || d.SupersededBy[0].ID != v2.ID || !slices.Equal(d.Memory.SupersededBy, []string{v2.ID}) || len(d.History) != 0 {
		t.Fatalf("v1 superseded_by: %s", mustJSON(d))
	}
	// not readable and missing look the same
	_, hidden := e.v1(&carol, "GET", "/api/v1/memories/"+v2.ID, nil, nil)
	code, missing := e.v1(&carol, "GET", "/api/v1/memories/"+strings.Repeat("0", 64), nil, nil)
	if code != http.StatusNotFound || hidden != missing {
		t.Fatalf("non-reader %q vs missing %d %q", hidden, code, missing)
	}
	if code, _ := e.v1(&carol, "GET", "/api/v1/memories/xyz", nil, nil); code != 400 {
		t.Fatalf("malformed id: %d", code)
	}
}
