package agent

import (
	"context"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

func testAgent(t *testing.T, o Options) *Agent {
	t.Helper()
	if o.Secret == "" {
		o.Secret = nostr.GeneratePrivateKey()
	}
	o.Publish = func(context.Context, *nostr.Event) error { return nil }
	o.Query = func(context.Context, nostr.Filter, func(*nostr.Event) bool) error { return nil }
	a, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestAgent_FeedNeverBlocks: with the queue full, Feed returns at once
// and counts the drop; the agent's own events are never queued.
func TestAgent_FeedNeverBlocks(t *testing.T) {
	a := testAgent(t, Options{QueueSize: 2})
	other := nostr.GeneratePrivateKey()
	accepted := 0
	for i := 0; i < 5; i++ {
		evt := nostr.Event{Kind: 9, Content: "x", Tags: nostr.Tags{{"h", "g"}}}
		evt.Sign(other)
		if a.Feed(snowclaw.ReadEvent(&evt)) {
			accepted++
		}
	}
	own := nostr.Event{Kind: 9, Content: "mine"}
	own.Sign(a.sk)
	if a.Feed(snowclaw.ReadEvent(&own)) {
		t.Fatal("the agent's own event was fed back to it")
	}
	st := a.Stats()
	if accepted != 2 || st.Dropped != 3 || st.QueueDepth != 2 || st.QueueCap != 2 {
		t.Fatalf("accepted %d, stats %+v; want 2 accepted, 3 dropped", accepted, st)
	}
}

func TestAgent_ShouldReply(t *testing.T) {
	owner := nostr.GeneratePrivateKey()
	ownerPK, _ := nostr.GetPublicKey(owner)
	cases := []struct {
		name, mode string
		owner      bool
		addressed  bool
		want       bool
	}{
		{"all", "all", false, false, true},
		{"mention without", "mention", false, false, false},
		{"mention with", "mention", false, true, true},
		{"owner mode, owner", "owner", true, false, true},
		{"owner mode, other mentions", "owner", false, true, false},
		{"none", "none", true, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := testAgent(t, Options{Owner: ownerPK})
			evt := nostr.Event{Kind: 30078, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"d", "snowclaw:config:global"}}, Content: `{"respond_mode":"` + tc.mode + `"}`}
			evt.Sign(owner)
			a.seeAppData(snowclaw.ReadEvent(&evt))
			sender := "someone"
			if tc.owner {
				sender = ownerPK
			}
			if got := a.shouldReply(sender, "g", tc.addressed); got != tc.want {
				t.Fatalf("shouldReply = %v, want %v", got, tc.want)
			}
		})
	}
}
