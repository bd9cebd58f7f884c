package node_test

import (
	"encoding/json"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// Conversation memories ("<Name>: <text>", one per
// turn) rank by who said them and by the session they were written in.

// dated is evt by u, re-signed with created_at at.
func dated(u user, evt nostr.Event, at nostr.Timestamp) nostr.Event {
	evt.CreatedAt = at
	if err := evt.Sign(u.sk); err != nil {
		panic(err)
	}
	return evt
}

func turnMemory(u user, topic, text string, at nostr.Timestamp) nostr.Event {
	b, _ := json.Marshal(map[string]string{"summary": text})
	return dated(u, memory(u, topic, string(b)), at)
}

// TestSearch_SessionMatesOverSocket: a memory that answers without the
// question's words comes with the memory written with it, and nothing
// rides along that should not: another author's memory of that second,
// the author's memory of another day, a private mate the reader may not
// read.
func TestSearch_SessionMatesOverSocket(t *testing.T) {
	e := startEnv(t, withSearch)
	alice, mallory, bob := newUser(), newUser(), newUser()
	ac := e.connect(&alice)
	at := nostr.Now() - 3*86400
	hit := e.mustPublish(ac, turnMemory(alice, "t1", "Melanie: I painted that lake sunrise last year", at))
	mate := e.mustPublish(ac, turnMemory(alice, "t2", "Melanie: By the way, take a look at this.", at))
	secret := e.mustPublish(ac, dated(alice, privateMemory(t, alice, e.agent.pk, "t3", "Melanie: and my pin is 4411"), at))
	later := e.mustPublish(ac, turnMemory(alice, "t4", "Melanie: take a look at my dog", at+86400)) // another day
	spam := e.mustPublish(e.connect(&mallory), turnMemory(mallory, "t1", "Melanie: take a look at my coin", at))

	const q = "when was the sunrise painted"
	n, got := explainNotice(t, e, &bob, q)
	if len(got) != 2 || !got[hit.ID] || !got[mate.ID] {
		t.Fatalf("bob got %v, want the hit and its public mate only (later %s, spam %s, secret %s)",
			got, later.ID[:8], spam.ID[:8], secret.ID[:8])
	}
	var body struct {
		Results []struct {
			ID    string `json:"id"`
			Floor string `json:"floor"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(n), &body); err != nil {
		t.Fatal(err)
	}
	for _, r := range body.Results {
		if r.ID == mate.ID && r.Floor != "context" {
			t.Fatalf("the mate passed floor %q, want context: %s", r.Floor, n)
		}
	}
	// alice reads her private memory, so it is her session's mate too
	if got := search(t, e, &alice, nostr.Filter{Search: q}); !contains(got, secret.ID) || contains(got, spam.ID) {
		t.Fatalf("alice got %v, want her private mate and not mallory's", ids(got))
	}
	// mallory's memory of the same second borrows nothing from alice's,
	// and lends nothing to them
	if got := search(t, e, &mallory, nostr.Filter{Search: "coin"}); len(got) != 1 || got[0].ID != spam.ID {
		t.Fatalf("mallory's coin: %v, want only his memory", ids(got))
	}
	if got := search(t, e, nil, nostr.Filter{Search: "zzzqqq"}); len(got) != 0 {
		t.Fatalf("unrelated query: %v", ids(got))
	}
}

// TestSearch_SpeakerOverSocket: of two memories holding the query's
// words, the one said by the person the query names comes first.
func TestSearch_SpeakerOverSocket(t *testing.T) {
	e := startEnv(t, withSearch)
	a := newUser()
	c := e.connect(&a)
	at := nostr.Now() - 3600
	to := e.mustPublish(c, turnMemory(a, "t1", "Caroline: Melanie, Melanie, your paintings of the lake, Melanie! I love the lake paintings", at))
	by := e.mustPublish(c, turnMemory(a, "t2", "Melanie: I paint the lake", at+60))
	got := search(t, e, nil, nostr.Filter{Search: "What does Melanie paint at the lake?"})
	if len(got) != 2 || got[0].ID != by.ID || got[1].ID != to.ID {
		t.Fatalf("got %v, want what Melanie said (%s) first", ids(got), by.ID[:8])
	}
}
