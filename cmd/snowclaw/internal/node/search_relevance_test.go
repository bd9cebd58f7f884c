package node_test

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// Relevant or nothing (docs/search.md#relevant-or-nothing): without a
// floor fusion ranks whatever the vector side scored, so a query matching
// nothing would return the least unrelated memories. A result passes a relevance floor (a query term
// after analysis, or vector similarity at least the index's calibrated
// floor; search/floor.go) and the explain row names the floor it passed.

var databaseMemories = []string{
	`{"summary":"PostgreSQL streaming replication lags behind the primary"}`,
	`{"summary":"The database vacuum runs every night at two"}`,
	`{"summary":"Indexes on foreign keys speed up joins in postgres"}`,
	`{"summary":"Connection pooling with pgbouncer keeps the database fast"}`,
}

func TestSearch_RelevantOrNothing(t *testing.T) {
	e := startEnv(t, withSearch)
	a := newUser()
	c := e.connect(nil)
	var mem []nostr.Event
	for i, m := range databaseMemories {
		mem = append(mem, e.mustPublish(c, memory(a, "db/"+string(rune('a'+i)), m)))
	}
	for _, tc := range []struct {
		query string
		want  []string // ids that must be found; nil: nothing at all
	}{
		{"zzzqqq", nil},
		{"banana smoothie recipe", nil},
		{"what is the", nil},         // stop words only
		{"the banana of it", nil},    // shares only stop words
		{"zzzqqq explain:true", nil}, // explain changes nothing
		{"pgbouncer", []string{mem[3].ID}},
		{"database", []string{mem[1].ID, mem[3].ID}},
		{"replicating postgres", []string{mem[0].ID, mem[2].ID}}, // stemmed
	} {
		t.Run(tc.query, func(t *testing.T) {
			rc := e.raw()
			rc.send("REQ", "q", nostr.Filter{Search: tc.query})
			if _, ok := rc.waitFor("EOSE", "q", 5*time.Second); !ok {
				t.Fatalf("no EOSE: %s", rc.all())
			}
			got := rc.eventIDs("q")
			if len(got) != len(tc.want) {
				t.Fatalf("got %d results %v, want exactly %d", len(got), got, len(tc.want))
			}
			for _, id := range tc.want {
				if !got[id] {
					t.Fatalf("missing %s in %v", id[:8], got)
				}
			}
		})
	}
}

// TestSearch_ExplainNamesTheFloor: every explain row says which floor its
// result passed, on the websocket and the HTTP API alike.
func TestSearch_ExplainNamesTheFloor(t *testing.T) {
	e := startEnv(t, withSearch)
	a := newUser()
	c := e.connect(nil)
	for i, m := range databaseMemories {
		e.mustPublish(c, memory(a, "db/"+string(rune('a'+i)), m))
	}
	n, got := explainNotice(t, e, nil, "database pooling")
	var body struct {
		Results []struct {
			ID          string  `json:"id"`
			Floor       string  `json:"floor"`
			VectorScore float64 `json:"vector_score"`
			VectorFloor float64 `json:"vector_floor"`
			BM25Rank    int     `json:"bm25_rank"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(n), &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Results) != 2 || len(got) != 2 {
		t.Fatalf("want the two database memories, got %s", n)
	}
	for _, r := range body.Results {
		switch r.Floor {
		case "bm25", "both":
		default:
			t.Fatalf("a keyword match passed floor %q: %s", r.Floor, n)
		}
		if r.VectorFloor <= 0 || (r.Floor == "both") != (r.VectorScore >= r.VectorFloor) {
			t.Fatalf("floor %q does not agree with vector %.3f against floor %.3f", r.Floor, r.VectorScore, r.VectorFloor)
		}
	}
	if api := apiExplain(t, e, &a, "database pooling"); !strings.Contains(api, `"floor":"`) {
		t.Fatalf("the API's explain names no floor: %s", api)
	}
}

// TestSearch_LiveEqualsStored: one matcher. The same memories published
// before a subscription (answered from the index) and after it (delivered
// live) give the same answer.
func TestSearch_LiveEqualsStored(t *testing.T) {
	e := startEnv(t, withSearch)
	before, after := newUser(), newUser()
	texts := []string{
		"kubernetes pods restart on OOM",
		"the kubernetes scheduler spreads pods",
		"dns caches expire after the ttl",
		"the and of it was what", // stop words only
		"Kubernetes!",
		"kubernetes-operator rollout",
		"zzzqqq",
		"restarting pods nightly", // shares a stem, not the word
	}
	const query = "kubernetes pod restarts"
	c := e.connect(nil)
	for i, text := range texts {
		e.mustPublish(c, memory(before, "ops/"+string(rune('a'+i)), text))
	}
	stored := contentsOf(search(t, e, nil, nostr.Filter{Search: query, Authors: []string{before.pk}}))

	rc := e.raw()
	rc.send("REQ", "live", nostr.Filter{Search: query, Authors: []string{after.pk}})
	if _, ok := rc.waitFor("EOSE", "live", 5*time.Second); !ok {
		t.Fatal("no EOSE")
	}
	for i, text := range texts {
		e.mustPublish(c, memory(after, "ops/"+string(rune('a'+i)), text))
	}
	sentinel := e.mustPublish(c, memory(after, "ops/zz", "kubernetes sentinel"))
	waitEvent(t, rc.Client, "live", sentinel.ID)
	var live []*nostr.Event
	for _, evt := range rc.Events("live") {
		if evt.ID != sentinel.ID {
			live = append(live, evt)
		}
	}
	got := contentsOf(live)
	if len(stored) < 3 || strings.Join(stored, "|") != strings.Join(got, "|") {
		t.Fatalf("stored answer %q, live deliveries %q: want the same (and at least 3)", stored, got)
	}
}

func contentsOf(evs []*nostr.Event) []string {
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		out = append(out, e.Content)
	}
	sort.Strings(out)
	return out
}
