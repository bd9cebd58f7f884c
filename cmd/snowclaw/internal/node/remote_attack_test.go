package node_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// A hostile remote sends forged events (a changed content under the old
// id, a valid id under another key's signature), a private and a group
// memory (not public data: they must not cross), and an event outside
// the filter; only the one good memory is returned, each drop counted by
// reason. It also challenges for AUTH, which is never answered, and what
// it is sent carries neither the scoped extensions nor who asks: a query
// naming a group or a non-public tier is not sent at all.
func TestRemote_HostileRemote(t *testing.T) {
	a, b := newUser(), newUser()
	good := memory(a, "airship/good", `{"summary":"Airship fleet refuels at dawn"}`)
	badID := memory(a, "airship/badid", `{"summary":"Airship fleet refuels at noon"}`)
	badID.Content = `{"summary":"Airship fleet refuels at midnight, says the forger"}`
	badSig := memory(a, "airship/badsig", `{"summary":"Airship fleet refuels at dusk"}`)
	badSig.PubKey = b.pk // claims b wrote it: the id is recomputed, the signature is a's
	badSig.ID = badSig.GetID()
	private := memory(a, "airship/private", "ciphertext", nostr.Tag{"encrypted", "nip44"}, nostr.Tag{"p", b.pk})
	group := memory(a, "airship/group", `{"summary":"Airship fleet group plans"}`, nostr.Tag{"h", "crew"})
	note := mkEvent(a, 1, nil, "airship fleet note")
	var answer [][]byte
	for _, evt := range []nostr.Event{good, badID, badSig, private, group, note} {
		raw, _ := json.Marshal(evt)
		answer = append(answer, raw)
	}
	hostile := startScripted(t, func(string) [][]byte { return answer })
	e := startEnv(t, withSearch, withMetrics, withRemotes(10*time.Second, hostile.url, 1.0))
	u := newUser()

	// scoped queries stay here
	for _, q := range []string{"airship group:crew include:remote", "airship tier:private include:remote", "airship tier:group tier:public include:remote"} {
		if _, closed := fetch(t, e.connect(&u), nostr.Filter{Search: q}); closed != "" && !strings.HasPrefix(closed, "auth-required") && !strings.HasPrefix(closed, "restricted") {
			t.Fatalf("%q: CLOSED %s", q, closed)
		}
		if n := hostile.hits.Load(); n != 0 {
			t.Fatalf("%q reached the remote (%d requests): %v", q, n, hostile.received())
		}
	}

	got := search(t, e, &u, nostr.Filter{Search: "airship fleet topic:airship explain:true include:remote"})
	if len(got) != 1 || got[0].ID != good.ID {
		t.Fatalf("got %v, want only the good memory %s", ids(got), good.ID[:8])
	}
	m := e.scrape()
	for _, reason := range []string{"id", "signature", "scope", "filter"} {
		key := `snowclaw_remote_events_dropped_total{reason="` + reason + `",remote="` + hostile.url + `"}`
		want := 1.0
		if reason == "scope" {
			want = 2 // the private and the group memory
		}
		if m[key] != want {
			t.Fatalf("%s = %v, want %v (%v)", key, m[key], want, remoteSeries(m))
		}
	}
	frames := hostile.received()
	var reqs int
	for _, f := range frames {
		if strings.HasPrefix(f, `["AUTH"`) {
			t.Fatalf("the remote search answered AUTH: %s", f)
		}
		if strings.Contains(f, u.pk) || strings.Contains(f, e.agent.pk) || strings.Contains(f, e.owner.pk) {
			t.Fatalf("a frame names a local key: %s", f)
		}
		var frame []json.RawMessage
		if json.Unmarshal([]byte(f), &frame) != nil || len(frame) < 3 {
			continue
		}
		var label string
		json.Unmarshal(frame[0], &label)
		if label != "REQ" {
			continue
		}
		reqs++
		var filter nostr.Filter
		if err := json.Unmarshal(frame[2], &filter); err != nil {
			t.Fatal(err)
		}
		if filter.Search != "airship fleet topic:airship" {
			t.Fatalf("sent search %q, want only the text and public extensions", filter.Search)
		}
	}
	if reqs != 1 {
		t.Fatalf("%d REQs sent, want 1: %v", reqs, frames)
	}
}

// What this relay deleted does not come back through a remote's copy:
// the deletion's tombstone refuses the remote result as it refuses a
// re-publication.
func TestRemote_DeletedHereStaysGone(t *testing.T) {
	bare := startBareKhatru(t)
	e := startEnv(t, withSearch, withRemotes(10*time.Second, bare.url, 1.0))
	a := newUser()
	gone := memory(a, "gondola/gone", `{"summary":"Gondola cable inspection notes"}`)
	kept := memory(a, "gondola/kept", `{"summary":"Gondola cabin heating notes"}`)
	c := e.connect(nil)
	e.mustPublish(c, gone)
	e.mustPublish(c, mkEvent(a, 5, nostr.Tags{{"e", gone.ID}}, "wrong"))
	publishTo(t, bare.url, gone, kept)
	got := search(t, e, nil, nostr.Filter{Search: "gondola notes include:remote"})
	if contains(got, gone.ID) {
		t.Fatalf("a memory deleted here came back from a remote: %v", ids(got))
	}
	if !contains(got, kept.ID) {
		t.Fatalf("the remote's other memory is missing: %v", ids(got))
	}
}
