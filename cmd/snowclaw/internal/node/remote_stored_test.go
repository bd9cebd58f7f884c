package node_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// A remote's older version of an address this relay stores is not a
// remote result, even when the local search did not return the stored
// version (here its words do not match the query): this relay's version
// stands. A remote version newer than the stored one is served, marked
// with its origin. The stored version counts only for a reader the local
// read rule lets read it: a group-tier version hides the remote's older
// public copy from the group's members, and from nobody else (whose
// results then tell them nothing about what is stored here).
func TestRemote_StoredVersionBeatsOlderRemoteCopy(t *testing.T) {
	v := newUser()
	now := nostr.Now()
	at := func(evt nostr.Event, ts nostr.Timestamp) nostr.Event {
		evt.CreatedAt = ts
		evt.Sign(v.sk)
		return evt
	}
	// address 1: stored here (newer), an older copy on the remote
	stored := at(memory(v, "airship/hull", `{"summary":"Airship hull is aluminium now"}`), now-10)
	staleCopy := at(memory(v, "airship/hull", `{"summary":"Zeppelin hull is canvas"}`), now-100)
	// address 2: stored here (older), a newer version on the remote
	oldHere := at(memory(v, "airship/gas", `{"summary":"Airship lift gas is hydrogen"}`), now-100)
	newerThere := at(memory(v, "airship/gas", `{"summary":"Zeppelin lift gas is helium"}`), now-10)
	// address 3: a group-tier version here (newer), an older public copy there
	groupHere := at(groupMemory(v, "crew", "airship/crew", "Airship crew roster is sealed"), now-10)
	publicThere := at(memory(v, "airship/crew", `{"summary":"Zeppelin crew roster is public"}`), now-100)
	var raws [][]byte
	for _, evt := range []nostr.Event{staleCopy, newerThere, publicThere} {
		b, _ := json.Marshal(evt)
		raws = append(raws, b)
	}
	far := startScripted(t, func(string) [][]byte { return raws })
	e := startEnv(t, withSearch, withRemotes(10*time.Second, far.url, 1.0))

	oc := e.connect(&e.owner)
	e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", "crew"}}, ""))
	vc := e.connect(&v)
	e.mustPublish(vc, mkEvent(v, 9021, nostr.Tags{{"h", "crew"}}, ""))
	for _, evt := range []nostr.Event{stored, oldHere, groupHere} {
		e.mustPublish(vc, evt)
	}
	if evs, _ := fetch(t, vc, nostr.Filter{IDs: []string{groupHere.ID}}); len(evs) != 1 {
		t.Fatal("the member cannot read the group's memory")
	}

	for _, tc := range []struct {
		name      string
		reader    *user
		want, not []string
	}{
		{"anonymous", nil, []string{newerThere.ID, publicThere.ID}, []string{staleCopy.ID, stored.ID, oldHere.ID}},
		{"group member", &v, []string{newerThere.ID}, []string{staleCopy.ID, publicThere.ID, stored.ID, oldHere.ID}},
	} {
		c := e.connect(tc.reader)
		got, closed := fetch(t, c, nostr.Filter{Search: "zeppelin include:remote explain:true"})
		if closed != "" {
			t.Fatalf("%s: CLOSED %s", tc.name, closed)
		}
		for _, id := range tc.want {
			if !contains(got, id) {
				t.Fatalf("%s: %s missing from %v (stale %s newer %s public %s)", tc.name, id[:8], ids(got), staleCopy.ID[:8], newerThere.ID[:8], publicThere.ID[:8])
			}
			if o := originOf(c.Notices())[id]; o != far.url {
				t.Fatalf("%s: origin of %s is %q, want the remote", tc.name, id[:8], o)
			}
		}
		for _, id := range tc.not {
			if contains(got, id) {
				t.Fatalf("%s: %s returned: %v", tc.name, id[:8], ids(got))
			}
		}
	}
}
