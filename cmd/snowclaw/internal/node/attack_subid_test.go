package node_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// A subscription id is any string (NIP-01). go-nostr's EVENT and COUNT
// envelopes wrote it between quotes unescaped, so an id holding a quote
// or a backslash made frames that were not JSON and were dropped: such a
// subscription got no stored events, no search results, no live events
// and no count, with nothing said. Every frame must carry the id back
// exactly, as a JSON string, and no id may inject JSON of its own.
func TestAttack_SubscriptionIDsAreEscaped(t *testing.T) {
	e := startEnv(t, withSearch)
	a := newUser()
	pub := e.connect(nil)
	stored := e.mustPublish(pub, memory(a, "tools/lathe", `{"summary":"The lathe needs new carbide inserts"}`))
	rc := e.raw()
	for i, sub := range []string{`q"1`, `q\2`, `q","x":"y`, "q\n\u2028</script>"} {
		rc.send("REQ", sub, nostr.Filter{IDs: []string{stored.ID}})
		rc.send("REQ", sub+"s", nostr.Filter{Search: "lathe carbide inserts"})
		rc.send("COUNT", sub+"c", nostr.Filter{IDs: []string{stored.ID}})
		for _, s := range []string{sub, sub + "s"} {
			if _, ok := rc.waitFor("EOSE", s, 5*time.Second); !ok {
				t.Fatalf("id %q: no EOSE: %s", s, rc.all())
			}
			if !rc.eventIDs(s)[stored.ID] {
				t.Fatalf("id %q: the stored event never came: %s", s, rc.all())
			}
		}
		arr, ok := rc.waitFor("COUNT", sub+"c", 5*time.Second)
		if !ok || len(arr) != 3 {
			t.Fatalf("id %q: no COUNT: %s", sub+"c", rc.all())
		}
		var n struct{ Count int64 }
		if err := json.Unmarshal(arr[2], &n); err != nil || n.Count != 1 {
			t.Fatalf("id %q: COUNT %s", sub+"c", arr[2])
		}
		if i == 0 { // live delivery, to the first id only
			b := newUser() // has published nothing yet
			rc.send("REQ", sub+"l", nostr.Filter{Kinds: []int{1}, Authors: []string{b.pk}})
			if _, ok := rc.waitFor("EOSE", sub+"l", 5*time.Second); !ok {
				t.Fatalf("no EOSE for the live subscription: %s", rc.all())
			}
			live := e.mustPublish(pub, mkEvent(b, 1, nil, "a live note"))
			if arr, ok := rc.waitFor("EVENT", sub+"l", 5*time.Second); !ok || !rc.eventIDs(sub + "l")[live.ID] {
				t.Fatalf("the live event never came to %q (%s): %s", sub+"l", arr, rc.all())
			}
		}
	}
	for _, f := range rc.Frames() {
		var arr []json.RawMessage
		if err := json.Unmarshal(f, &arr); err != nil {
			t.Fatalf("a frame is not JSON: %s", f)
		}
		if len(arr) > 3 {
			t.Fatalf("a frame grew elements from its id: %s", f)
		}
	}
}
