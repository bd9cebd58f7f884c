package node_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// A search's flags are read once, at the edge (snowclaw.ReadFilter), and
// every layer below gets that one reading: the read rule, the remote
// layer and the index cannot disagree on what a query asks for, and no
// layer adds a flag by appending to the client's text. These are the
// ways a client might try to make them disagree.

// explainFor runs a REQ with search q as reader (nil: anonymous) and
// returns the result ids and the explain NOTICE's rows ("" when none came).
func explainFor(t *testing.T, e *testEnv, reader *user, q string) (map[string]bool, string) {
	t.Helper()
	rc := e.raw()
	defer rc.Close()
	if reader != nil {
		rc.auth(e.url, *reader)
	}
	rc.send("REQ", "s", nostr.Filter{Search: q})
	if _, ok := rc.waitAny("s", 10*time.Second, "EOSE", "CLOSED"); !ok {
		t.Fatalf("%q: no EOSE or CLOSED: %s", q, rc.all())
	}
	for _, n := range rc.Notices() {
		var body struct {
			Explain string `json:"explain"`
		}
		if json.Unmarshal([]byte(n), &body) == nil && body.Explain == "s" {
			return rc.eventIDs("s"), n
		}
	}
	return rc.eventIDs("s"), ""
}

// Repeated and contradictory flags: one reading, the same for the read
// rule and the engine. Tiers and groups are alternatives, so naming a
// public one beside a scoped one still asks for the scoped one; a flag
// repeated is asked once; since: after until: matches nothing, without
// an error.
func TestSearchFlags_RepeatedAndContradictory(t *testing.T) {
	hostile := startScripted(t, func(string) [][]byte { return nil })
	w := buildWorldWith(t, withSearch, withRemotes(10*time.Second, hostile.url, 1.0))
	c := w.connect(&w.member)
	pub := w.mustPublish(c, memory(w.member, "harbour/walrus", `{"summary":"a walrus sleeps on the harbour steps"}`))

	for _, tc := range []struct {
		q, reader, prefix string
	}{
		{"walrus tier:public tier:private", "anonymous", "auth-required:"},
		{"walrus tier:private tier:public tier:public", "anonymous", "auth-required:"},
		{"walrus TIER:public tier:INTERNAL", "anonymous", "auth-required:"},
		{"walrus group:" + pubGroup + " group:" + privGroup, "stranger", "restricted:"},
		{"walrus group:" + pubGroup + " tier:public tier:group", "stranger", "restricted:"},
		{"walrus tier:public tier:secret", "member", "invalid:"},
		{"walrus since:2024-01-01 since:tomorrow", "member", "invalid:"},
	} {
		reader := map[string]*user{"anonymous": nil, "stranger": &w.nonMember, "member": &w.member}[tc.reader]
		_, closed := fetch(t, w.connect(reader), nostr.Filter{Search: tc.q})
		if !strings.HasPrefix(closed, tc.prefix) {
			t.Errorf("%q as %s: CLOSED %q, want %s", tc.q, tc.reader, closed, tc.prefix)
		}
	}
	if n := hostile.hits.Load(); n != 0 {
		t.Fatalf("a refused search reached the remote (%d requests): %v", n, hostile.received())
	}

	// since: after until: nothing, and no error
	if got := search(t, w.testEnv, &w.member, nostr.Filter{Search: "walrus since:2030-01-01 until:2020-01-01"}); len(got) != 0 {
		t.Fatalf("since after until found %v", ids(got))
	}
	// the last since: holds (1 is before anything was stored)
	if got := search(t, w.testEnv, &w.member, nostr.Filter{Search: "walrus since:4000000000 since:1"}); !contains(got, pub.ID) {
		t.Fatalf("since:4000000000 since:1 lost the memory: %v", ids(got))
	}
	// explain asked twice, and once contradicted, answers once
	got, notice := explainFor(t, w.testEnv, &w.member, "walrus explain:true explain:no explain:TRUE")
	if !got[pub.ID] || strings.Count(notice, pub.ID) != 1 {
		t.Fatalf("explain asked twice: results %v, notice %s", got, notice)
	}
	// include:remote twice asks the remote once, and sends neither flag
	search(t, w.testEnv, &w.member, nostr.Filter{Search: "walrus include:remote include:REMOTE include:superseded"})
	reqs := sentREQs(t, hostile.received())
	if len(reqs) != 1 || reqs[0].Search != "walrus" {
		t.Fatalf("remote got %d REQs (%v), want one for \"walrus\"", len(reqs), reqs)
	}
}

// Flags inside quotes are words, on every path: the read rule does not
// ask for authentication, the remote is not asked, the engine does not
// narrow. And a switch the API takes beside the query (explain=1,
// remote=1) is set on the parsed query, so a quote the client left open
// cannot swallow it.
func TestSearchFlags_InsideQuotes(t *testing.T) {
	remote := startScripted(t, func(string) [][]byte { return nil })
	e := startEnv(t, withSearch, withRemotes(10*time.Second, remote.url, 1.0))
	a := newUser()
	c := e.connect(nil)
	m := e.mustPublish(c, memory(a, "harbour/walrus", `{"summary":"a walrus sleeps on the harbour steps, tier private says the sign"}`))

	for _, q := range []string{`walrus "tier:private"`, `walrus "include:remote"`, `"walrus tier:private include:remote`, `walrus "source:npub1xyz since:never"`} {
		got, closed := fetch(t, e.connect(nil), nostr.Filter{Search: q})
		if closed != "" {
			t.Fatalf("%s: CLOSED %s", q, closed)
		}
		if !contains(got, m.ID) {
			t.Fatalf("%s: the memory is missing (a quoted flag narrowed the search): %v", q, ids(got))
		}
	}
	if n := remote.hits.Load(); n != 0 {
		t.Fatalf("a quoted include:remote reached the remote (%d requests): %v", n, remote.received())
	}

	// the API's switches with a quote left open
	res := e.searchAPI(&a, `"walrus`, "&explain=1")
	h, ok := hitFor(res, m.ID)
	if !ok || h.Explain == nil || h.Explain.ID != m.ID || h.Explain.Final <= 0 {
		t.Fatalf("explain=1 with an open quote: %s", mustJSON(res))
	}
	res = e.searchAPI(&a, `"walrus`, "&remote=1")
	if h, ok := hitFor(res, m.ID); !ok || h.Origin != "local" {
		t.Fatalf("remote=1 with an open quote: %s", mustJSON(res))
	}
	if reqs := sentREQs(t, remote.received()); len(reqs) != 1 || reqs[0].Search != `"walrus"` {
		t.Fatalf("remote=1 with an open quote: the remote got %v, want one search for the phrase", reqs)
	}
}

// A search as large as a frame may be: thousands of words and flags,
// repeated and contradictory. It is answered (a clear refusal or the
// results) and the connection serves the next search.
func TestSearchFlags_HugeInput(t *testing.T) {
	e := startEnv(t, withSearch)
	a := newUser()
	c := e.connect(nil)
	m := e.mustPublish(c, memory(a, "harbour/walrus", `{"summary":"a walrus sleeps on the harbour steps"}`))

	var b strings.Builder
	for i := 0; b.Len() < 400*1024; i++ {
		fmt.Fprintf(&b, "walrus%d topic:t%d include:remote explain:true \"quoted %d tier:private\" ", i, i, i)
	}
	for _, q := range []string{b.String(), strings.Repeat("tier:public ", 30000) + "walrus", strings.Repeat(`"`, 200000)} {
		rc := e.raw()
		start := time.Now()
		rc.send("REQ", "big", nostr.Filter{Search: q})
		frame, ok := rc.waitAny("big", 30*time.Second, "EOSE", "CLOSED")
		if !ok {
			t.Fatalf("a %d-byte search: no EOSE or CLOSED: %.300s", len(q), rc.all())
		}
		t.Logf("a %d-byte search answered %s in %v", len(q), frame[0], time.Since(start))
		rc.send("REQ", "next", nostr.Filter{Search: "walrus"})
		if _, ok := rc.waitFor("EOSE", "next", 10*time.Second); !ok || !rc.eventIDs("next")[m.ID] {
			t.Fatalf("after a %d-byte search the connection no longer searches: %.300s", len(q), rc.all())
		}
		rc.Close()
	}
}

// include:remote from a stranger: an anonymous reader's public search
// may leave (it names nobody), a scoped one is refused here before any
// remote is asked, and the frames sent carry only the public words.
func TestSearchFlags_IncludeRemoteFromStranger(t *testing.T) {
	a := newUser()
	theirs := memory(a, "airship/fleet", `{"summary":"the airship fleet refuels at dawn"}`)
	raw, _ := json.Marshal(theirs)
	remote := startScripted(t, func(string) [][]byte { return [][]byte{raw} })
	w := buildWorldWith(t, withSearch, withRemotes(10*time.Second, remote.url, 1.0))

	for _, q := range []string{
		"airship tier:private include:remote",
		"airship tier:group include:remote",
		"airship group:" + privGroup + " include:remote",
		"airship include:remote tier:public tier:internal",
	} {
		_, closed := fetch(t, w.connect(nil), nostr.Filter{Search: q})
		if !strings.HasPrefix(closed, "auth-required:") {
			t.Fatalf("%q from a stranger: CLOSED %q, want auth-required", q, closed)
		}
	}
	// a group's chat or anything narrowed by a tag stays here, silently
	if got := search(t, w.testEnv, nil, nostr.Filter{Kinds: []int{9}, Search: "airship include:remote"}); len(got) != 0 {
		t.Fatalf("chat search with include:remote found %v", ids(got))
	}
	if n := remote.hits.Load(); n != 0 {
		t.Fatalf("a stranger's scoped search reached the remote (%d requests): %v", n, remote.received())
	}

	got, notice := explainFor(t, w.testEnv, nil, "airship fleet include:remote explain:true")
	if !got[theirs.ID] || !strings.Contains(notice, remote.url) {
		t.Fatalf("a stranger's public layered search: results %v, notice %s", got, notice)
	}
	reqs := sentREQs(t, remote.received())
	if len(reqs) != 1 || reqs[0].Search != "airship fleet" || len(reqs[0].Authors) != 0 {
		t.Fatalf("the remote got %v, want one search for the words alone", reqs)
	}
}
