package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/internal/pgtest"
	"github.com/snowclaw/snowclaw/relay/store"
	"github.com/snowclaw/snowclaw/relay/store/postgres"
)

// follow runs s.Follow from after in the background and hands the
// changes out on a channel; it stops when the test ends.
func follow(t *testing.T, s *postgres.Store, after int64) (<-chan store.Change, <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, done := make(chan store.Change, 1024), make(chan error, 1)
	go func() { done <- s.Follow(ctx, after, func(c store.Change) error { out <- c; return nil }) }()
	t.Cleanup(func() { cancel(); <-done })
	return out, done
}

// next is the next change, or a failure after a generous wait (a
// barrier against a lost change, not a speed test).
func next(t *testing.T, ch <-chan store.Change) store.Change {
	t.Helper()
	select {
	case c := <-ch:
		return c
	case <-time.After(30 * time.Second):
		t.Fatal("no change arrived within 30 s")
		return store.Change{}
	}
}

// A's saves reach B's Follow in order with A's origin, and none is lost
// or repeated when B's listening connection is killed in the middle.
func TestFollow_TwoInstancesSurviveAKilledConnection(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	a, b := open(t, url), open(t, url)
	if a.Origin() == b.Origin() {
		t.Fatal("two stores share an origin")
	}
	head, err := b.Head(ctx)
	if err != nil || head != 0 {
		t.Fatalf("head of an empty log: %d, %v", head, err)
	}
	changes, _ := follow(t, b, 0)
	pk := newKey()
	admin := dial(t, url)
	const n = 300
	var sent []string
	var got []store.Change
	for i := range n {
		e := save(t, a, ev(pk, 1, nostr.Timestamp(1000+i), nil, fmt.Sprint(i)))
		sent = append(sent, e.ID)
		if i == n/3 || i == 2*n/3 {
			// once B has seen this one its connection is up: kill it,
			// and go on saving while it reconnects
			for len(got) < len(sent) {
				got = append(got, next(t, changes))
			}
			var killed int
			err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE datname = current_database() AND application_name LIKE 'snowclaw feed %'`).Scan(&killed)
			if err != nil || killed == 0 {
				t.Fatalf("killing the follower's connection: killed %d, err %v", killed, err)
			}
		}
	}
	for len(got) < len(sent) {
		got = append(got, next(t, changes))
	}
	var last int64
	for i, id := range sent {
		c := got[i]
		if c.Seq <= last {
			t.Fatalf("change %d has seq %d after %d", i, c.Seq, last)
		}
		last = c.Seq
		if c.Event.ID != id || c.Op != store.Saved || c.Origin != a.Origin() {
			t.Fatalf("change %d: %s %s from %s, want saved %s from %s", i, c.Op, c.Event.ID, c.Origin, id, a.Origin())
		}
	}
	select {
	case c := <-changes:
		t.Fatalf("an extra change after all %d: seq %d", n, c.Seq)
	default:
	}
	if h, _ := a.Head(ctx); h != last {
		t.Fatalf("head %d, last change seen %d", h, last)
	}
}

// Only real changes are logged: a delete of a missing event and a
// duplicate log nothing; a replacement that lost logs the seq it drew as
// unused, without an event; a delete logs the stored event. A saved
// event's entry names it, so one removed before the reader came comes
// without it, unless its kind is decisive: a group's state must be
// applied even when the event is gone.
func TestFollow_LogsOnlyChanges(t *testing.T) {
	ctx := context.Background()
	s := open(t, "")
	pk := newKey()
	note := save(t, s, ev(pk, 1, 10, nil, "note"))
	_ = s.SaveEvent(ctx, note)                                   // duplicate
	_ = s.DeleteEvent(ctx, ev(pk, 1, 11, nil, "never stored"))   // missing
	_ = s.ReplaceEvent(ctx, ev(pk, 0, 20, nil, "profile"))       // saved
	_ = s.ReplaceEvent(ctx, ev(pk, 0, 19, nil, "older profile")) // not newer
	put := save(t, s, ev(pk, snowclaw.KindPutUser, 21, nostr.Tags{{"h", "g"}, {"p", pk}}, "put"))
	for _, gone := range []*nostr.Event{note, put} {
		if err := s.DeleteEvent(ctx, &nostr.Event{ID: gone.ID}); err != nil { // by id alone
			t.Fatal(err)
		}
	}
	changes, _ := follow(t, s, 0)
	var last store.Change
	for i, want := range []struct {
		op      store.Op
		content string // "": no event
	}{
		{store.Saved, ""}, // the note, deleted since
		{store.Saved, "profile"},
		{store.Unused, ""},
		{store.Saved, "put"}, // decisive: its body is in the log
		{store.Deleted, "note"},
		{store.Deleted, "put"},
	} {
		last = next(t, changes)
		if last.Op != want.op || (last.Event == nil) != (want.content == "") ||
			last.Event != nil && last.Event.Content != want.content {
			t.Fatalf("change %d: %s %v, want %s %q", i, last.Op, last.Event, want.op, want.content)
		}
		if last.Seq != int64(i+1) {
			t.Fatalf("change %d has seq %d: the log has a gap", i, last.Seq)
		}
	}
	if h, _ := s.Head(ctx); h != last.Seq {
		t.Fatalf("head %d, want the deletion's %d", h, last.Seq)
	}
}

// Pruned entries: a follower that needs them gets ErrFeedTruncated; one
// that does not goes on; the newest entry is always kept. fn's error
// ends Follow with that error.
func TestFollow_Truncated(t *testing.T) {
	ctx := context.Background()
	s, err := postgres.Open(ctx, pgtest.New(t), postgres.Options{LogRetention: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pk := newKey()
	for i := range 3 {
		save(t, s, ev(pk, 1, nostr.Timestamp(i), nil, fmt.Sprint(i)))
	}
	if err := s.Prune(ctx); err != nil {
		t.Fatal(err)
	}
	if h, _ := s.Head(ctx); h != 3 {
		t.Fatalf("head after pruning %d, want 3", h)
	}
	if err := s.Follow(ctx, 0, func(store.Change) error { return nil }); !errors.Is(err, store.ErrFeedTruncated) {
		t.Fatalf("following from 0 after pruning: %v, want ErrFeedTruncated", err)
	}
	stop := errors.New("stop")
	var got []string
	err = s.Follow(ctx, 2, func(c store.Change) error { got = append(got, c.Event.Content); return stop })
	if !errors.Is(err, stop) || len(got) != 1 || got[0] != "2" {
		t.Fatalf("following from 2: %q, %v; want the kept entry, then fn's error", got, err)
	}
}

// Entries written before schema step 6 carry their event and no id or
// kind: a reader still gets the event from the entry, and a decisive one
// still makes a decision that missed it stale.
func TestFollow_EntriesFromBeforeTheyNamedTheirEvent(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	a := open(t, url)
	pk := newKey()
	removal := ev(pk, snowclaw.KindRemoveUser, 1, nostr.Tags{{"h", "g"}, {"p", pk}}, "")
	body, err := removal.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	conn := dial(t, url)
	// the row and its entry as an instance before step 6 wrote them
	var seq int64
	if err := conn.QueryRow(ctx, `WITH c AS (INSERT INTO changes (seq, op, origin, event)
			VALUES (nextval('changes_seq_seq'), 1, 'an older instance', $1::jsonb) RETURNING seq)
		INSERT INTO events (id, pubkey, created_at, kind, tags, content, sig, tagvalues, seq)
		SELECT $2, $3, 1, $4, $5, '', $6, ARRAY['h:g', 'p:' || $3], seq FROM c RETURNING seq`,
		string(body), removal.ID, removal.PubKey, removal.Kind, removal.Tags, removal.Sig).Scan(&seq); err != nil {
		t.Fatal(err)
	}
	changes, _ := follow(t, a, 0)
	if c := next(t, changes); c.Seq != seq || c.Op != store.Saved || c.Event == nil || c.Event.ID != removal.ID {
		t.Fatalf("the older entry came as %d %s %v, want %d saved %s", c.Seq, c.Op, c.Event, seq, removal.ID)
	}
	if _, err := a.SaveSequenced(store.WithDecidedAt(ctx, seq-1), ev(pk, 1, 2, nil, "decided before it")); !errors.Is(err, store.ErrStale) {
		t.Fatalf("a save decided before an older instance's removal: %v, want ErrStale", err)
	}
}
