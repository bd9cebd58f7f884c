package node_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"
)

// Finding 7: explain ranks and scores, the conflict list and the health
// counts were computed over every indexed doc, so an outsider could learn
// whether a word occurs in memories they cannot read by watching their
// own public memory's bm25_rank move. Everything a reader is shown is now
// computed over the scopes that reader may read (plugins/memsearch
// scope.go, search/parts.go).

// explainNotice is the explain NOTICE reader gets for query over the
// websocket (nil reader: anonymous), and the ids of the results.
func explainNotice(t *testing.T, e *testEnv, reader *user, query string) (string, map[string]bool) {
	t.Helper()
	rc := e.raw()
	defer rc.Close()
	if reader != nil {
		rc.auth(e.url, *reader)
	}
	rc.send("REQ", "x", nostr.Filter{Search: query + " explain:true"})
	if _, ok := rc.waitFor("EOSE", "x", 5*time.Second); !ok {
		t.Fatalf("no EOSE for %q: %s", query, rc.all())
	}
	for _, n := range rc.Notices() {
		var body struct {
			Explain string `json:"explain"`
		}
		if json.Unmarshal([]byte(n), &body) == nil && body.Explain == "x" {
			return n, rc.eventIDs("x")
		}
	}
	t.Fatalf("no explain NOTICE for %q: %s", query, rc.all())
	return "", nil
}

// apiExplain is the HTTP API's search answer with explain, as reader.
func apiExplain(t *testing.T, e *testEnv, reader *user, query string) string {
	t.Helper()
	var out json.RawMessage
	if code, msg := e.v1(reader, "GET", "/api/v1/search?explain=1&q="+url.QueryEscape(query), nil, &out); code != 200 {
		t.Fatalf("api search %q: %d %s", query, code, msg)
	}
	return string(out)
}

func indexDocs(t *testing.T, e *testEnv, reader *user) int {
	t.Helper()
	var h struct {
		Counts map[string]int `json:"counts"`
	}
	if code, msg := e.v1(reader, "GET", "/api/v1/health", nil, &h); code != 200 {
		t.Fatalf("health: %d %s", code, msg)
	}
	n, ok := h.Counts["index_docs"]
	if !ok {
		t.Fatalf("health without index_docs: %v", h.Counts)
	}
	return n
}

func TestAttack_SearchRanksLeakUnreadableDocs(t *testing.T) {
	w := buildWorldWith(t, withSearch)
	mallory, alice := w.nonMember, w.member // alice is in the private group, mallory is not
	const query = "walrus harbour"

	mc := w.connect(&mallory)
	mine := w.mustPublish(mc, memory(mallory, "notes/walrus", "a walrus was seen near the blue harbour"))
	w.mustPublish(mc, memory(mallory, "notes/port", "the harbour crane lifts containers"))

	wsBefore, got := explainNotice(t, w.testEnv, &mallory, query)
	if !got[mine.ID] || !strings.Contains(wsBefore, mine.ID) {
		t.Fatalf("mallory does not find her own memory: %s", wsBefore)
	}
	apiBefore := apiExplain(t, w.testEnv, &mallory, query)
	countBefore := indexDocs(t, w.testEnv, &mallory)
	aliceBefore, _ := explainNotice(t, w.testEnv, &alice, query)
	aliceCount := indexDocs(t, w.testEnv, &alice)

	// Alice's words Mallory may not read: private memories (the agent's
	// for her and her own), a private-group memory and private-group chat,
	// all full of the word Mallory probes for.
	ac := w.connect(&alice)
	agentKey, _ := nip44.GenerateConversationKey(alice.pk, w.agent.sk)
	ownKey, _ := nip44.GenerateConversationKey(w.agent.pk, alice.sk)
	var hers []nostr.Event
	for i, text := range []string{"walrus walrus diary", "the walrus tusk I keep", "walrus harbour secret meeting"} {
		c, _ := nip44.Encrypt(text, agentKey)
		hers = append(hers, w.mustPublish(w.connect(&w.agent), mkEvent(w.agent, 30078,
			nostr.Tags{{"d", "snow:memory:user/alice/walrus" + string(rune('a'+i))}, {"p", alice.pk}, {"encrypted", "nip44"}}, c)))
		c, _ = nip44.Encrypt(text+" (mine)", ownKey)
		hers = append(hers, w.mustPublish(ac, mkEvent(alice, 30078,
			nostr.Tags{{"d", "snow:memory:diary/walrus" + string(rune('a'+i))}, {"p", alice.pk}, {"encrypted", "nip44"}}, c)))
	}
	hers = append(hers,
		w.mustPublish(ac, mkEvent(alice, 30078, nostr.Tags{{"d", "snow:memory:group/priv/walrus"}, {"h", privGroup}}, "our walrus harbour plan")),
		w.mustPublish(ac, mkEvent(alice, 9, nostr.Tags{{"h", privGroup}}, "did anyone else see the walrus at the harbour this morning? it was huge")),
	)

	// barrier: Alice finds every one of them, so they are indexed
	aliceAfter, aliceGot := explainNotice(t, w.testEnv, &alice, query)
	for _, h := range hers {
		if !aliceGot[h.ID] {
			t.Fatalf("alice does not find her %s (kind %d): %v", h.ID[:8], h.Kind, aliceGot)
		}
	}
	if aliceAfter == aliceBefore {
		t.Fatal("alice's own explain did not change: she may read her docs, so her statistics must include them")
	}
	if n := indexDocs(t, w.testEnv, &alice); n != aliceCount+len(hers) {
		t.Fatalf("alice's index_docs %d, want %d", n, aliceCount+len(hers))
	}

	wsAfter, _ := explainNotice(t, w.testEnv, &mallory, query)
	if wsAfter != wsBefore {
		t.Fatalf("mallory's explain moved when alice stored what mallory cannot read:\nbefore %s\nafter  %s", wsBefore, wsAfter)
	}
	if apiAfter := apiExplain(t, w.testEnv, &mallory, query); apiAfter != apiBefore {
		t.Fatalf("mallory's API explain moved:\nbefore %s\nafter  %s", apiBefore, apiAfter)
	}
	if n := indexDocs(t, w.testEnv, &mallory); n != countBefore {
		t.Fatalf("mallory's index_docs moved from %d to %d", countBefore, n)
	}
	var h struct {
		Counts map[string]int `json:"counts"`
	}
	if w.v1(&mallory, "GET", "/api/v1/health", nil, &h); len(h.Counts) != 2 || h.Counts["memories"] == 0 {
		t.Fatalf("mallory's health counts %v: want only her memories and index docs", h.Counts)
	}
	if w.v1(&w.owner, "GET", "/api/v1/health", nil, &h); h.Counts["connections"] == 0 {
		t.Fatalf("the owner's health lacks the connection count: %v", h.Counts)
	}
}

// A memory Mallory cannot read must neither make a conflict she sees nor
// show in one (by id, in the dashboard, in explain's conflicts_with).
func TestAttack_SearchConflictsLeakUnreadableDocs(t *testing.T) {
	w := buildWorldWith(t, withSearch)
	mallory, alice, bob := w.nonMember, w.member, newUser()
	c := w.connect(nil)
	m := w.mustPublish(c, memory(mallory, "ops/port", "the service listens on port 80"))
	w.mustPublish(c, memory(bob, "ops/port", "the service listens on port 80"))
	if cs := w.conflicts(&mallory, ""); len(cs) != 0 {
		t.Fatalf("agreeing memories reported as a conflict: %+v", cs)
	}
	// Alice's private-group memory disagrees; only she (and the group) may read it.
	secret := w.mustPublish(w.connect(&alice), mkEvent(alice, 30078,
		nostr.Tags{{"d", "snow:memory:ops/port"}, {"h", privGroup}}, "the service listens on port 8443"))
	if cs := w.conflicts(&alice, "ops/port"); len(cs) != 1 || len(cs[0].Memories) != 3 {
		t.Fatalf("alice, who reads all three, sees %+v", cs)
	}
	if cs := w.conflicts(&mallory, ""); len(cs) != 0 {
		t.Fatalf("mallory sees a conflict made by a memory she cannot read: %+v", cs)
	}
	notice, _ := explainNotice(t, w.testEnv, &mallory, "service port")
	if strings.Contains(notice, "conflicts_with") || strings.Contains(notice, secret.ID) {
		t.Fatalf("mallory's explain reports a conflict: %s", notice)
	}
	if !strings.Contains(notice, m.ID) {
		t.Fatalf("mallory's explain lacks her own memory: %s", notice)
	}
}

// A search whose extensions ask for scoped data (a
// private group, group, private or internal memories) from an anonymous
// connection got a silently public-only answer, so clients that
// authenticate on demand never did. It is now CLOSED with auth-required:
// exactly as the #h filter asking for the same thing, through the same
// rule (policies.Visibility.CheckFilter) reading the extensions with the
// one parser the search uses (snowclaw.ParseSearch).
func TestAttack_ScopedSearchWithoutAuth(t *testing.T) {
	w := buildWorldWith(t, withSearch)
	hOnly := func(g string) nostr.Filter { return nostr.Filter{Tags: nostr.TagMap{"h": {g}}} }
	for _, tc := range []struct {
		name   string
		reader *user
		filter nostr.Filter
		same   *nostr.Filter // the tag filter that must be answered alike
		closed string        // "" = answered with EOSE
		want   string        // an event that must be found, if any
	}{
		{"anon group:priv", nil, nostr.Filter{Search: "secret plans group:priv"}, ptrF(hOnly(privGroup)), "auth-required:", ""},
		{"anon quoted group", nil, nostr.Filter{Search: `plans group:"priv"`}, ptrF(hOnly(privGroup)), "auth-required:", ""},
		{"anon tier:group", nil, nostr.Filter{Search: "ship friday tier:group"}, nil, "auth-required:", ""},
		{"anon tier:group of a public group", nil, nostr.Filter{Search: "notes tier:group group:pub"},
			&nostr.Filter{Kinds: []int{30078}, Tags: nostr.TagMap{"h": {pubGroup}}}, "auth-required:", ""},
		{"anon tier:private", nil, nostr.Filter{Search: "prefs tier:private"}, nil, "auth-required:", ""},
		{"anon tier:internal", nil, nostr.Filter{Search: "tier:internal"}, nil, "auth-required:", ""},
		{"anon limit 0", nil, nostr.Filter{Search: "plans group:priv", LimitZero: true}, nil, "auth-required:", ""},
		{"non-member group:priv", &w.nonMember, nostr.Filter{Search: "secret plans group:priv"}, ptrF(hOnly(privGroup)), "restricted:", ""},
		{"anon malformed extension", nil, nostr.Filter{Search: "plans tier:secret"}, nil, "invalid:", ""},
		{"member group:priv", &w.member, nostr.Filter{Search: "secret plans group:priv"}, ptrF(hOnly(privGroup)), "", w.events["chat-private-group"].ID},
		{"anon public group chat", nil, nostr.Filter{Search: "hello group:pub"}, ptrF(hOnly(pubGroup)), "", w.events["chat-public-group"].ID},
		{"anon tier:public", nil, nostr.Filter{Search: "goroutines tier:public"}, nil, "", w.events["memory-public"].ID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs, closed := fetch(t, w.connect(tc.reader), tc.filter)
			if tc.closed == "" {
				if closed != "" {
					t.Fatalf("CLOSED %q, want results", closed)
				}
				if !contains(evs, tc.want) {
					t.Fatalf("got %v, want %s among them", ids(evs), tc.want[:8])
				}
			} else {
				if !strings.HasPrefix(closed, tc.closed) {
					t.Fatalf("got %v and CLOSED %q, want CLOSED %q", ids(evs), closed, tc.closed)
				}
				if len(evs) != 0 {
					t.Fatalf("CLOSED, but %d events sent first", len(evs))
				}
			}
			if tc.same != nil {
				_, tagClosed := fetch(t, w.connect(tc.reader), *tc.same)
				if prefix(tagClosed) != prefix(closed) {
					t.Fatalf("the search is answered %q, the tag filter %q", closed, tagClosed)
				}
			}
		})
	}
}

func ptrF(f nostr.Filter) *nostr.Filter { return &f }

// prefix is a NIP-01 reason's machine-readable prefix ("" for none).
func prefix(reason string) string {
	p, _, _ := strings.Cut(reason, ":")
	return p
}
