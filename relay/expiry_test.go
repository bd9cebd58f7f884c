package relay

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/relay/store"
)

// TestExpiry_Sweep: the first sweep finds the expired events stored
// before the process started, later ones what was saved since; each goes
// through Delete, so the deleted hooks (index, agent) hear of it.
func TestExpiry_Sweep(t *testing.T) {
	st, err := store.OpenBadger(t.TempDir(), 100, store.BadgerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := &Relay{store: st, log: slog.New(slog.DiscardHandler), expiry: newExpiry()}
	var deleted []string
	r.OnEventDeleted = append(r.OnEventDeleted, func(_ context.Context, evt *snowclaw.Event) { deleted = append(deleted, evt.Content) })

	ctx := context.Background()
	now := nostr.Now()
	sk := nostr.GeneratePrivateKey()
	put := func(content string, expires nostr.Timestamp) *nostr.Event {
		evt := &nostr.Event{Kind: 1, CreatedAt: now - 100, Content: content, Tags: nostr.Tags{}}
		if expires != 0 {
			evt.Tags = nostr.Tags{{"expiration", strconv.FormatInt(int64(expires), 10)}}
		}
		if err := evt.Sign(sk); err != nil {
			t.Fatal(err)
		}
		if err := st.SaveEvent(ctx, evt); err != nil {
			t.Fatal(err)
		}
		return evt
	}
	put("expired before start", now-10)
	put("expires later", now+50)
	put("never expires", 0)

	r.expiry.sweep(ctx, r, now)
	if !slices.Equal(deleted, []string{"expired before start"}) {
		t.Fatalf("first sweep deleted %q", deleted)
	}
	r.expiry.track(snowclaw.ReadEvent(put("saved while running", now+20)))
	r.expiry.sweep(ctx, r, now+30)
	if !slices.Equal(deleted, []string{"expired before start", "saved while running"}) {
		t.Fatalf("second sweep: deleted %q", deleted)
	}
	r.expiry.sweep(ctx, r, now+60)
	if len(deleted) != 3 || deleted[2] != "expires later" {
		t.Fatalf("third sweep: deleted %q", deleted)
	}
	ch, _ := st.QueryEvents(ctx, nostr.Filter{Kinds: []int{1}})
	var left []string
	for evt := range ch {
		left = append(left, evt.Content)
	}
	if !slices.Equal(left, []string{"never expires"}) {
		t.Errorf("left in the store: %q", left)
	}
}

// TestExpiry_ForgetAndTrackOnce: a deleted event is not swept later, and
// an event tracked twice (on save, then by the first sweep's scan) comes
// due once.
func TestExpiry_ForgetAndTrackOnce(t *testing.T) {
	x := newExpiry()
	now := nostr.Now()
	mk := func(id string, at nostr.Timestamp) *nostr.Event {
		return &nostr.Event{ID: id, Tags: nostr.Tags{{"expiration", strconv.FormatInt(int64(at), 10)}}}
	}
	x.track(snowclaw.ReadEvent(mk("gone", now-5)))
	x.track(snowclaw.ReadEvent(mk("twice", now-3)))
	x.track(snowclaw.ReadEvent(mk("twice", now-3)))
	x.track(snowclaw.ReadEvent(mk("later", now+60)))
	x.forget("gone")
	if got := x.expired(now); !slices.Equal(got, []string{"twice"}) {
		t.Fatalf("expired now = %q, want [twice]", got)
	}
	if got := x.expired(now + 30); len(got) != 0 {
		t.Fatalf("expired again = %q", got)
	}
	x.forget("later")
	x.track(snowclaw.ReadEvent(mk("later", now+60))) // stored again after a deletion
	if got := x.expired(now + 60); !slices.Equal(got, []string{"later"}) {
		t.Fatalf("expired at +60 = %q, want [later] once", got)
	}
}
