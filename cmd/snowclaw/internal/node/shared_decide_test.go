package node_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/internal/testwait"
)

// A member removed on B posts on A at once. A has not applied the removal
// (its follower is held up behind a transaction of the log still running)
// and B's other writes are notes, which cannot change A's decision, so A
// decides the post without reading the log first: the store's statement finds B's removal after the
// position A decided on and stores nothing, and A decides again once it
// has caught up: restricted, as on B.
func TestShared_SaveDecidedBeforeAPeersChangeIsDecidedAgain(t *testing.T) {
	envs := startCluster(t, 2, withMetrics)
	a, b := envs[0], envs[1]
	owner, member := a.owner, newUser()
	oa, ma := a.connect(&owner), a.connect(&member)
	a.mustPublish(oa, mkEvent(owner, 9007, nostr.Tags{{"h", "held"}, {"private"}, {"closed"}}, ""))
	a.mustPublish(oa, mkEvent(owner, 9000, nostr.Tags{{"h", "held"}, {"p", member.pk}}, ""))
	a.mustPublish(ma, mkEvent(member, 9, nostr.Tags{{"h", "held"}}, "still a member"))
	ob := b.connect(&owner)

	// B writes too: its note changes nothing A's rules read, so A still
	// decides at once
	b.mustPublish(ob, mkEvent(owner, 1, nil, "a note from B"))
	testwait.For(t, "A applying B's note", func() bool { return a.r.FeedPosition() >= b.r.FeedPosition() })
	tx := holdTheLog(t, a.opts.PostgresURL)
	b.mustPublish(ob, mkEvent(owner, 9001, nostr.Tags{{"h", "held"}, {"p", member.pk}}, ""))

	post := make(chan error, 1)
	go func() { post <- publish(ma, mkEvent(member, 9, nostr.Tags{{"h", "held"}}, "after my removal on B")) }()
	testwait.For(t, "A's store refusing a save decided before B's removal", func() bool { return a.scrape()["snowclaw_feed_saves_decided_again_total"] >= 1 })
	// let the followers go on: A catches up and decides again
	if err := tx.Rollback(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-post:
		if err == nil || !strings.Contains(err.Error(), "restricted:") {
			t.Fatalf("the member removed on B posted on A: %v, want restricted:", err)
		}
	case <-time.After(testwait.Scaled(30 * time.Second)):
		t.Fatal("no answer to the post")
	}
	evs, _ := fetch(t, oa, nostr.Filter{Kinds: []int{9}, Tags: nostr.TagMap{"h": {"held"}}})
	if len(evs) != 1 {
		t.Fatalf("the group holds %d messages, want only the one sent before the removal", len(evs))
	}
}

// The other way round: a user who joined on B posts on A while A has
// not applied the join (B's other writes are notes). A's rules, on
// its stale state, refuse the post; that refusal never reaches the store
// to be checked, so A must make sure of its state before answering. It
// cannot here (its follower is held up): it answers error:, never
// restricted:. Once the follower moves on, the post is accepted.
func TestShared_RefusalDecidedBeforeAPeersChangeIsNotSent(t *testing.T) {
	envs := startCluster(t, 2)
	a, b := envs[0], envs[1]
	owner, joiner := a.owner, newUser()
	a.mustPublish(a.connect(&owner), mkEvent(owner, 9007, nostr.Tags{{"h", "open-held"}, {"public"}, {"open"}}, ""))
	ja, jb := a.connect(&joiner), b.connect(&joiner)

	b.mustPublish(jb, mkEvent(joiner, 1, nil, "a note from B"))
	testwait.For(t, "A applying B's note", func() bool { return a.r.FeedPosition() >= b.r.FeedPosition() })
	tx := holdTheLog(t, a.opts.PostgresURL)
	b.mustPublish(jb, mkEvent(joiner, 9021, nostr.Tags{{"h", "open-held"}}, ""))

	err := publish(ja, mkEvent(joiner, 9, nostr.Tags{{"h", "open-held"}}, "joined on B"))
	if err == nil || !strings.Contains(err.Error(), "error:") {
		t.Fatalf("A answered a member who joined on B with %v while it could not have applied the join; want error: (try again)", err)
	}
	if err := tx.Rollback(context.Background()); err != nil {
		t.Fatal(err)
	}
	a.mustPublish(ja, mkEvent(joiner, 9, nostr.Tags{{"h", "open-held"}}, "joined on B, again"))
}

// holdTheLog opens a writer's transaction that takes the change log's
// next seq and stays open (until the test rolls it back, or ends): every
// follower waits at that seq.
func holdTheLog(t *testing.T, url string) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	db, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(ctx) })
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(ctx) })
	if _, err := tx.Exec(ctx, `INSERT INTO changes (seq, op, origin) VALUES (nextval('changes_seq_seq'), 3, 'held by the test')`); err != nil {
		t.Fatal(err)
	}
	return tx
}
