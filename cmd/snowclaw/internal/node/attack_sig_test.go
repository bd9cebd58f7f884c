package node_test

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// TestAttack_ForgedSignatures: the websocket's id and signature check
// (internal/nostrsig, which keeps authors' keys lifted between events)
// refuses every forgery of an author whose key it already holds, with
// invalid:, and stores none of them; the author's next real event is
// still accepted.
func TestAttack_ForgedSignatures(t *testing.T) {
	e := startEnv(t)
	alice, mallory := newUser(), newUser()
	ac, mc := e.connect(&alice), e.connect(&mallory)
	first := e.mustPublish(ac, mkEvent(alice, 1, nil, "the launch is on friday")) // her key is now cached
	other := mkEvent(alice, 1, nil, "something else")
	reID := func(evt nostr.Event) nostr.Event { evt.ID = evt.GetID(); return evt }
	forge := func(f func(*nostr.Event)) nostr.Event { evt := first; evt.Tags = nostr.Tags{}; f(&evt); return evt }
	cases := map[string]struct {
		evt  nostr.Event
		want string
	}{
		"content changed, id redone": {reID(forge(func(e *nostr.Event) { e.Content = "the launch is cancelled" })), "signature does not verify"},
		"another event's signature":  {reID(forge(func(e *nostr.Event) { e.Content = "pay mallory"; e.Sig = other.Sig })), "signature does not verify"},
		"id not the hash":            {forge(func(e *nostr.Event) { e.Content = "the launch is cancelled" }), "id is not the hash"},
		"upper-case id":              {forge(func(e *nostr.Event) { e.ID = strings.ToUpper(e.ID) }), "id is not the hash"},
		"key off the curve":          {reID(forge(func(e *nostr.Event) { e.PubKey = strings.Repeat("0", 63) + "5" })), "signature does not verify"},
		"r not below p":              {forge(func(e *nostr.Event) { e.Sig = strings.Repeat("f", 64) + e.Sig[64:] }), "signature does not verify"},
		"zero signature":             {forge(func(e *nostr.Event) { e.Sig = strings.Repeat("0", 128) }), "signature does not verify"},
	}
	for name, tc := range cases {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			err := publish(mc, tc.evt)
			if err == nil || !strings.Contains(err.Error(), "msg: invalid: ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("publish: %v, want invalid: …%s", err, tc.want)
			}
			if got, _ := fetch(t, mc, nostr.Filter{IDs: []string{strings.ToLower(tc.evt.ID)}}); len(got) != 0 && got[0].ID != first.ID {
				t.Fatalf("the forgery was stored: %v", ids(got))
			}
		})
	}
	e.mustPublish(ac, other)
	if got, _ := fetch(t, ac, nostr.Filter{Authors: []string{alice.pk}}); len(got) != 2 {
		t.Fatalf("alice's notes: %v, want her two real ones", ids(got))
	}
}
