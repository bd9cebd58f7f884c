package node_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/internal/testwait"
)

// okFrame publishes evt raw and returns its OK: accepted and message.
func okFrame(t *testing.T, rc *rawConn, evt nostr.Event) (bool, string) {
	t.Helper()
	from := len(rc.Frames())
	rc.send("EVENT", evt)
	var ok bool
	var msg string
	// frames before from may hold the OK of an earlier publish of evt
	if !testwait.Until(testwait.DefaultTimeout, func() bool {
		for _, f := range rc.Frames()[from:] {
			var arr []json.RawMessage
			var label, id string
			if json.Unmarshal(f, &arr) != nil || len(arr) < 4 {
				continue
			}
			json.Unmarshal(arr[0], &label)
			json.Unmarshal(arr[1], &id)
			if label == "OK" && id == evt.ID {
				json.Unmarshal(arr[2], &ok)
				json.Unmarshal(arr[3], &msg)
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no OK for %s:\n%s", evt.ID[:8], rc.all())
	}
	return ok, msg
}

// TestDuplicate_OKTrue: sending an event the relay already holds is no
// failure (NIP-01): OK true with a duplicate: message, and subscribers do
// not get it twice. An older version of an address is not stored and
// says so: OK false, duplicate:.
func TestDuplicate_OKTrue(t *testing.T) {
	e := startEnv(t)
	alice := newUser()
	watcher := e.raw()
	watcher.send("REQ", "w", nostr.Filter{Authors: []string{alice.pk}})
	if _, ok := watcher.waitFor("EOSE", "w", 5*time.Second); !ok {
		t.Fatal("no EOSE")
	}
	rc := e.raw()
	note := mkEvent(alice, 1, nil, "said once")
	addr := mkEvent(alice, 30078, nostr.Tags{{"d", "snow:memory:dup"}}, "v2")
	older := mkEvent(alice, 30078, nostr.Tags{{"d", "snow:memory:dup"}}, "v1")
	older.CreatedAt = addr.CreatedAt - 60
	older.Sign(alice.sk)
	for _, evt := range []nostr.Event{note, addr} {
		if ok, msg := okFrame(t, rc, evt); !ok || msg != "" {
			t.Fatalf("first kind %d: OK %v %q, want true and no message", evt.Kind, ok, msg)
		}
		if ok, msg := okFrame(t, rc, evt); !ok || !strings.HasPrefix(msg, "duplicate:") {
			t.Fatalf("again kind %d: OK %v %q, want true with duplicate:", evt.Kind, ok, msg)
		}
	}
	if ok, msg := okFrame(t, rc, older); ok || !strings.HasPrefix(msg, "duplicate:") {
		t.Fatalf("older version: OK %v %q, want false with duplicate:", ok, msg)
	}
	sentinel := e.mustPublish(e.connect(nil), mkEvent(alice, 1, nil, "sentinel"))
	waitEvent(t, watcher.Client, "w", sentinel.ID)
	n := 0
	for _, evt := range watcher.Events("w") {
		if evt.ID == note.ID || evt.ID == addr.ID {
			n++
		}
		if evt.ID == older.ID {
			t.Fatal("the older version was broadcast")
		}
	}
	if n != 2 {
		t.Fatalf("subscriber got the two events %d times, want once each", n)
	}
}

// TestBadFilter_Closed: a REQ or COUNT whose filter cannot be read is
// refused on its own subscription id (CLOSED invalid:), which a client
// can match, not with a NOTICE it cannot; likewise a bad EVENT that
// names its id gets OK false. Only a message that names nothing gets a
// NOTICE.
func TestBadFilter_Closed(t *testing.T) {
	e := startEnv(t)
	for _, tc := range []struct {
		name, msg, label, id string
	}{
		{"kinds not a list", `["REQ","b1",{"kinds":"1"}]`, "CLOSED", "b1"},
		{"limit not a number", `["REQ","b2",{"limit":"ten"}]`, "CLOSED", "b2"},
		{"ids not a list", `["REQ","b3",{"ids":5}]`, "CLOSED", "b3"},
		{"tag values not a list", `["REQ","b4",{"#t":"x"}]`, "CLOSED", "b4"},
		{"filter not an object", `["REQ","b5",42]`, "CLOSED", "b5"},
		{"truncated JSON", `["REQ","b6",{"kinds":[1]`, "NOTICE", ""},
		{"count with a bad filter", `["COUNT","b7",{"since":"yesterday"}]`, "CLOSED", "b7"},
		{"too many filters", `["REQ","b8"` + strings.Repeat(`,{"kinds":[1]}`, 11) + `]`, "CLOSED", "b8"},
		{"no filter", `["REQ","b9"]`, "CLOSED", "b9"},
		{"id not a string", `["REQ",7,{"kinds":[1]}]`, "CLOSED", ""}, // go-nostr reads it as ""
		{"not JSON", `hello`, "NOTICE", ""},
		{"event with a bad field", `["EVENT",{"id":"` + strings.Repeat("ab", 32) + `","kind":"one"}]`, "OK", strings.Repeat("ab", 32)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := e.raw()
			if err := rc.SendRaw([]byte(tc.msg)); err != nil {
				t.Fatal(err)
			}
			arr, ok := rc.waitFor(tc.label, tc.id, 5*time.Second)
			if !ok {
				t.Fatalf("%s: no %s %q:\n%s", tc.msg, tc.label, tc.id, rc.all())
			}
			reason := arr[len(arr)-1]
			var text string
			json.Unmarshal(reason, &text)
			if !strings.HasPrefix(text, "invalid:") {
				t.Fatalf("%s: %s reason %q, want invalid:", tc.msg, tc.label, text)
			}
			if tc.label != "NOTICE" && len(rc.Notices()) > 0 {
				t.Fatalf("%s: a NOTICE as well: %v", tc.msg, rc.Notices())
			}
			if tc.label == "OK" {
				var accepted bool
				json.Unmarshal(arr[2], &accepted)
				if accepted {
					t.Fatal("a bad event was accepted")
				}
			}
			// the connection is still usable
			rc.send("REQ", "after", nostr.Filter{Kinds: []int{1}})
			if _, ok := rc.waitFor("EOSE", "after", 5*time.Second); !ok {
				t.Fatalf("connection unusable after %s:\n%s", tc.msg, rc.all())
			}
		})
	}
}

// TestFrames_NoTrailingNewline: every frame the relay writes is one JSON
// value and nothing after it (json.Encoder would append "\n", which some
// clients compare or log verbatim).
func TestFrames_NoTrailingNewline(t *testing.T) {
	e := startEnv(t)
	alice := newUser()
	rc := e.raw()
	rc.auth("", alice)                                           // AUTH, OK
	evt := e.mustPublish(rc.Client, mkEvent(alice, 1, nil, "x")) // OK
	rc.send("REQ", "s", nostr.Filter{IDs: []string{evt.ID}})     // EVENT, EOSE
	// REQ and COUNT are answered on goroutines of their own: wait for
	// this one, or the COUNT below may be the frame waited for first
	if _, ok := rc.waitFor("EOSE", "s", 5*time.Second); !ok {
		t.Fatalf("no EOSE:\n%s", rc.all())
	}
	rc.send("REQ", "", nostr.Filter{})                   // CLOSED
	rc.SendRaw([]byte("nonsense"))                       // NOTICE
	rc.send("COUNT", "c", nostr.Filter{Kinds: []int{1}}) // COUNT
	if _, ok := rc.waitFor("COUNT", "c", 5*time.Second); !ok {
		t.Fatalf("no COUNT:\n%s", rc.all())
	}
	labels := map[string]bool{}
	for _, f := range rc.Frames() {
		if len(f) == 0 || !bytes.Equal(f, bytes.TrimSpace(f)) || !json.Valid(f) {
			t.Fatalf("frame %q is not exactly one JSON value", f)
		}
		var arr []json.RawMessage
		json.Unmarshal(f, &arr)
		var l string
		json.Unmarshal(arr[0], &l)
		labels[l] = true
	}
	for _, l := range []string{"AUTH", "OK", "EVENT", "EOSE", "CLOSED", "NOTICE", "COUNT"} {
		if !labels[l] {
			t.Errorf("no %s frame was checked", l)
		}
	}
}
