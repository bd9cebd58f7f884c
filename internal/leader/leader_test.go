package leader_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/snowclaw/snowclaw/internal/leader"
	"github.com/snowclaw/snowclaw/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// candidate runs one election and reports its terms on a channel.
type candidate struct {
	name   string
	cancel context.CancelFunc
	done   chan struct{}
}

type term struct {
	who   string
	start bool // false: the term ended
}

func run(t *testing.T, url, name string, terms chan<- term) *candidate {
	ctx, cancel := context.WithCancel(context.Background())
	c := &candidate{name: name, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		leader.Run(ctx, leader.Options{URL: url, Retry: 200 * time.Millisecond, Check: 100 * time.Millisecond}, func(lctx context.Context, _ leader.Previous) {
			terms <- term{name, true}
			<-lctx.Done()
			terms <- term{name, false}
		})
	}()
	t.Cleanup(func() { c.cancel(); <-c.done })
	return c
}

func next(t *testing.T, terms <-chan term) term {
	t.Helper()
	select {
	case tm := <-terms:
		return tm
	case <-time.After(20 * time.Second):
		t.Fatal("no election happened")
	}
	return term{}
}

// One of two candidates leads; when it shuts down the other takes over,
// and when the new leader's session is killed (a crashed machine, as the
// server sees it) it steps down and the first, back, takes over again.
func TestRun_OneLeaderAndTakeover(t *testing.T) {
	url := pgtest.New(t)
	terms := make(chan term, 16)
	a := run(t, url, "a", terms)
	first := next(t, terms)
	if first != (term{"a", true}) {
		t.Fatalf("first term %+v, want a leading", first)
	}
	run(t, url, "b", terms)
	a.cancel() // a clean shutdown hands over
	<-a.done
	if tm := next(t, terms); tm != (term{"a", false}) {
		t.Fatalf("got %+v, want a's term to end", tm)
	}
	if tm := next(t, terms); tm != (term{"b", true}) {
		t.Fatalf("got %+v, want b to take over", tm)
	}
	run(t, url, "a2", terms)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	// the leader's session dies: b's term ends, and a2 leads
	var killed int
	err = admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_locks l JOIN pg_stat_activity s USING (pid)
		WHERE l.locktype = 'advisory' AND l.granted AND s.datname = current_database()`).Scan(&killed)
	if err != nil || killed != 1 {
		t.Fatalf("killing the leader's session: %d killed, %v", killed, err)
	}
	got := map[term]bool{next(t, terms): true, next(t, terms): true}
	if !got[term{"b", false}] || !got[term{"a2", true}] {
		t.Fatalf("after the leader's session died: %v, want b's term over and a2 leading", got)
	}
}

// Many candidates at once: exactly one leads at a time.
func TestRun_ExactlyOneOfMany(t *testing.T) {
	url := pgtest.New(t)
	terms := make(chan term, 64)
	for _, n := range []string{"a", "b", "c", "d"} {
		run(t, url, n, terms)
	}
	tm := next(t, terms)
	if !tm.start {
		t.Fatalf("first report %+v is not a start", tm)
	}
	// a barrier, not a sleep: an advisory lock query from here sees it held
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var free bool
	if err := admin.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", leader.Key).Scan(&free); err != nil || free {
		t.Fatalf("the lock is free (%v, %v) while %s leads", free, err, tm.who)
	}
	// the lock is held, so no other candidate can have started a term
	select {
	case other := <-terms:
		t.Fatalf("a second report %+v while %s leads", other, tm.who)
	default:
	}
}
