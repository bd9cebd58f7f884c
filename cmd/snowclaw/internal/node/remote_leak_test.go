package node_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
)

// sentREQs are the filters of every REQ a recording remote received.
func sentREQs(t *testing.T, frames []string) []nostr.Filter {
	t.Helper()
	var out []nostr.Filter
	for _, f := range frames {
		var frame []json.RawMessage
		if json.Unmarshal([]byte(f), &frame) != nil || len(frame) < 3 {
			continue
		}
		var label string
		json.Unmarshal(frame[0], &label)
		if label != "REQ" {
			continue
		}
		for _, raw := range frame[2:] {
			var filter nostr.Filter
			if err := json.Unmarshal(raw, &filter); err != nil {
				t.Fatal(err)
			}
			out = append(out, filter)
		}
	}
	return out
}

// A member's search scoped to a group (#h), to a person (#p), to authors
// or to group chat (kinds 9) with include:remote is answered from this
// relay only: no error, the local results, and the recording remote
// never hears of it (not even its NIP-11). Each form searches a word of
// its own, and the one unscoped search that does go out afterwards
// carries none of them.
func TestRemote_ScopedSearchesNeverLeave(t *testing.T) {
	a := newUser()
	bait := memory(a, "lantern/bait", `{"summary":"lantern rehearsal notes"}`)
	raw, _ := json.Marshal(bait)
	recorder := startScripted(t, func(string) [][]byte { return [][]byte{raw} })
	e := startEnv(t, withSearch, withRemotes(10*time.Second, recorder.url, 1.0))

	const g = "crew"
	member, friend := newUser(), newUser()
	oc := e.connect(&e.owner)
	e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", g}}, ""))
	mc := e.connect(&member)
	e.mustPublish(mc, mkEvent(member, 9021, nostr.Tags{{"h", g}}, ""))
	e.waitMembers(g, e.owner.pk, member.pk)

	groupMemory := e.mustPublish(mc, memory(member, "crew/lantern", `{"summary":"lantern quokkaword rota"}`, nostr.Tag{"h", g}))
	mention := e.mustPublish(mc, mkEvent(member, 1, nostr.Tags{{"p", friend.pk}}, "lantern wombatword for my friend"))
	byFriend := e.mustPublish(e.connect(&friend), memory(friend, "friend/lantern", `{"summary":"lantern numbatword habit"}`))
	chat := e.mustPublish(mc, mkEvent(member, 9, nostr.Tags{{"h", g}}, "lantern dingoword tonight in the crew"))

	for _, tc := range []struct {
		name string
		f    nostr.Filter
		want string
		word string
	}{
		{"#h", nostr.Filter{Kinds: []int{30078}, Tags: nostr.TagMap{"h": {g}}, Search: "lantern quokkaword include:remote"}, groupMemory.ID, "quokkaword"},
		{"#p", nostr.Filter{Tags: nostr.TagMap{"p": {friend.pk}}, Search: "lantern wombatword include:remote"}, mention.ID, "wombatword"},
		{"authors", nostr.Filter{Authors: []string{friend.pk}, Search: "lantern numbatword include:remote"}, byFriend.ID, "numbatword"},
		{"kinds:[9]", nostr.Filter{Kinds: []int{9}, Search: "lantern dingoword include:remote"}, chat.ID, "dingoword"},
	} {
		got, closed := fetch(t, e.connect(&member), tc.f)
		if closed != "" {
			t.Fatalf("%s: CLOSED %s, want the local results", tc.name, closed)
		}
		if !contains(got, tc.want) {
			t.Fatalf("%s: the local result is missing: %v", tc.name, ids(got))
		}
		if contains(got, bait.ID) {
			t.Fatalf("%s: a remote result was served: the search went out", tc.name)
		}
		if n := recorder.hits.Load(); n != 0 {
			t.Fatalf("%s reached the remote (%d requests): %v", tc.name, n, recorder.received())
		}
	}

	// the same rule holds on the other ways in: COUNT, the HTTP API, MCP's backend
	if n, closed := count(t, e.connect(&member), nostr.Filter{Tags: nostr.TagMap{"p": {friend.pk}}, Search: "lantern wombatword include:remote"}); closed != "" || n != 1 {
		t.Fatalf("COUNT by #p: %d, CLOSED %q", n, closed)
	}
	res := e.searchAPI(&member, "lantern dingoword", "&kinds=9&remote=1")
	if len(res.Results) != 1 || res.Results[0].Event.ID != chat.ID || res.Results[0].Origin != "local" {
		t.Fatalf("API search for chat: %+v", res.Results)
	}
	if n := recorder.hits.Load(); n != 0 {
		t.Fatalf("COUNT or the API reached the remote (%d requests): %v", n, recorder.received())
	}

	// the recorder works: an unscoped search reaches it, with its own words only
	got := search(t, e, &member, nostr.Filter{Search: "lantern rehearsal include:remote"})
	if !contains(got, bait.ID) {
		t.Fatalf("the unscoped search did not reach the remote: %v", ids(got))
	}
	reqs := sentREQs(t, recorder.received())
	if len(reqs) != 1 || reqs[0].Search != "lantern rehearsal" {
		t.Fatalf("sent %+v, want one REQ searching %q", reqs, "lantern rehearsal")
	}
	for _, f := range recorder.received() {
		for _, w := range []string{"quokkaword", "wombatword", "numbatword", "dingoword", g, friend.pk, member.pk} {
			if strings.Contains(f, w) {
				t.Fatalf("a frame to the remote carries %q: %s", w, f)
			}
		}
	}
}

// A remote serving memories that are not public here — a plaintext copy
// of a private memory (snow:tier private and a p tag), an internal one,
// a group's (h), one naming a person (snow:learnt-from) — or forged ones
// (bad id, bad signature) has none of them served, to an anonymous
// reader, to the person named, or to a member of a group of that name;
// the one public memory is. Each drop is counted.
func TestRemote_NonPublicRemoteMemoriesNeverServed(t *testing.T) {
	a, person := newUser(), newUser()
	good := memory(a, "kite/good", `{"summary":"Kite festival starts at noon"}`, nostr.Tag{"snow:tier", "public"})
	private := memory(a, "kite/private", `{"summary":"Kite festival: the person's allergy list"}`, nostr.Tag{"snow:tier", "private"}, nostr.Tag{"p", person.pk})
	privateNoP := memory(a, "kite/private2", `{"summary":"Kite festival private budget"}`, nostr.Tag{"snow:tier", "private"})
	internal := memory(a, "kite/internal", `{"summary":"Kite festival internal agent notes"}`, nostr.Tag{"snow:tier", "internal"})
	groupTagged := memory(a, "kite/group", `{"summary":"Kite festival crew plans"}`, nostr.Tag{"h", "crew"}, nostr.Tag{"snow:tier", "group"})
	groupClaim := memory(a, "kite/groupclaim", `{"summary":"Kite festival group tier without h"}`, nostr.Tag{"snow:tier", "group"})
	learnt := memory(a, "kite/learnt", `{"summary":"Kite festival, as a person said"}`, nostr.Tag{"snow:learnt-from", person.pk})
	mentions := memory(a, "kite/mention", `{"summary":"Kite festival with a p tag"}`, nostr.Tag{"p", person.pk})
	badID := memory(a, "kite/badid", `{"summary":"Kite festival forged"}`)
	badID.Content = `{"summary":"Kite festival forged after signing"}`
	badSig := memory(a, "kite/badsig", `{"summary":"Kite festival forged signer"}`)
	badSig.PubKey = person.pk
	badSig.ID = badSig.GetID()
	bad := []nostr.Event{private, privateNoP, internal, groupTagged, groupClaim, learnt, mentions, badID, badSig}
	var answer [][]byte
	for _, evt := range append([]nostr.Event{good}, bad...) {
		raw, _ := json.Marshal(evt)
		answer = append(answer, raw)
	}
	hostile := startScripted(t, func(string) [][]byte { return answer })
	e := startEnv(t, withSearch, withMetrics, withRemotes(10*time.Second, hostile.url, 1.0))

	member := newUser()
	e.mustPublish(e.connect(&e.owner), mkEvent(e.owner, 9007, nostr.Tags{{"h", "crew"}}, ""))
	e.mustPublish(e.connect(&member), mkEvent(member, 9021, nostr.Tags{{"h", "crew"}}, ""))
	e.waitMembers("crew", e.owner.pk, member.pk)

	for name, reader := range map[string]*user{"anonymous": nil, "the person": &person, "a member": &member, "the owner": &e.owner} {
		got := search(t, e, reader, nostr.Filter{Search: "kite festival include:remote"})
		if len(got) != 1 || got[0].ID != good.ID {
			t.Fatalf("%s got %v, want only the public memory %s", name, ids(got), good.ID[:8])
		}
	}
	m := e.scrape()
	for reason, want := range map[string]float64{"id": 1, "signature": 1, "scope": float64(len(bad) - 2)} {
		key := `snowclaw_remote_events_dropped_total{reason="` + reason + `",remote="` + hostile.url + `"}`
		if m[key] != want {
			t.Fatalf("%s = %v, want %v (%v)", key, m[key], want, remoteSeries(m))
		}
	}
}

// A layered search sends its explain NOTICE only when the REQ asked for
// explain:true: clients show NOTICEs to people. Everything the relay
// sends for a subscription arrives before its EOSE, so after EOSE
// nothing more is coming.
func TestRemote_NoticeOnlyWhenExplainAsked(t *testing.T) {
	snow := startEnv(t, withSearch)
	snowRemote := serveRemote(t, snow.n.Handler())
	e := startEnv(t, withSearch, withRemotes(10*time.Second, snowRemote.url, 0.5))
	a := newUser()
	local := memory(a, "pelican/local", `{"summary":"Pelican colony counts at the harbour"}`)
	far := memory(a, "pelican/far", `{"summary":"Pelican colony counts at the lake"}`)
	e.mustPublish(e.connect(nil), local)
	publishTo(t, snow.url, far)

	c := e.connect(nil)
	got, closed := fetch(t, c, nostr.Filter{Search: "pelican colony include:remote"})
	if closed != "" || !contains(got, local.ID) || !contains(got, far.ID) {
		t.Fatalf("layered search: %v, CLOSED %q", ids(got), closed)
	}
	if n := c.Notices(); len(n) != 0 {
		t.Fatalf("a NOTICE without explain:true: %v", n)
	}

	c = e.connect(nil)
	if _, closed := fetch(t, c, nostr.Filter{Search: "pelican colony include:remote explain:true"}); closed != "" {
		t.Fatalf("CLOSED %s", closed)
	}
	origin := originOf(c.Notices())
	if origin[local.ID] != "local" || origin[far.ID] != snowRemote.url {
		t.Fatalf("explain:true origins %v, want local and %s", origin, snowRemote.url)
	}

	// the HTTP API still marks each hit's origin, asked for explain or not
	res := e.searchAPI(&a, "pelican colony", "&remote=1")
	seen := map[string]string{}
	for _, h := range res.Results {
		seen[h.Event.ID] = h.Origin
	}
	if seen[local.ID] != "local" || seen[far.ID] != snowRemote.url {
		t.Fatalf("API origins %v", seen)
	}
}

// The relay logs the remotes it is configured with once, at start, and a
// remote whose NIP-11 fails (nothing listening) or that serves none (404)
// once, at its first use; later searches add no such line. The remote
// without NIP-11 is still searched, with the t tag fallback.
func TestRemote_LogsRemotesAtStartAndNIP11TroubleOnce(t *testing.T) {
	dead := serveRemote(t, http.NotFoundHandler())
	deadURL := dead.url
	dead.srv.Close()
	a := newUser()
	far := memory(a, "heron/far", `{"summary":"Heron nests by the weir"}`, nostr.Tag{"t", "heron"})
	raw, _ := json.Marshal(far)
	noDoc := startScriptedNIP11(t, "", func(string) [][]byte { return [][]byte{raw} })
	logs := &syncBuffer{}
	e := startEnv(t, withSearch, withRemotes(5*time.Second, deadURL, 1.0, noDoc.url, 0.5), func(o *node.Options) {
		o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	lines := func(has ...string) int {
		n := 0
		for _, l := range strings.Split(logs.String(), "\n") {
			all := true
			for _, h := range has {
				all = all && strings.Contains(l, h)
			}
			if all {
				n++
			}
		}
		return n
	}
	const started = "remote search: relays asked"
	if lines(started, deadURL+"=1", noDoc.url+"=0.5") != 1 {
		t.Fatalf("the configured remotes are not logged once at start:\n%s", logs.String())
	}
	if lines("NIP-11") != 0 {
		t.Fatalf("a remote was asked before any search:\n%s", logs.String())
	}

	got := search(t, e, nil, nostr.Filter{Search: "heron include:remote"})
	if !contains(got, far.ID) {
		t.Fatalf("the remote without NIP-11 was not searched: %v", ids(got))
	}
	for _, f := range sentREQs(t, noDoc.received()) {
		if f.Search != "" {
			t.Fatalf("a remote without NIP-11 was sent NIP-50: %+v", f)
		}
	}
	search(t, e, nil, nostr.Filter{Search: "heron weir include:remote"})
	search(t, e, nil, nostr.Filter{Search: "heron nests include:remote"})
	if n := lines("level=WARN", "NIP-11 document could not be fetched", deadURL); n != 1 {
		t.Fatalf("the dead remote's NIP-11 failure logged %d times:\n%s", n, logs.String())
	}
	if n := lines("level=WARN", "serves no NIP-11 document", noDoc.url, "404"); n != 1 {
		t.Fatalf("the remote without NIP-11 logged %d times:\n%s", n, logs.String())
	}
	if n := lines(started); n != 1 {
		t.Fatalf("the remotes logged %d times", n)
	}
}
