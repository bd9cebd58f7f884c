package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/internal/pgtest"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/relay/store"
)

// PostgreSQL is killed (SIGKILL, every process) while writers on two
// handles save as fast as it answers, then started again. Every save that
// was acknowledged is stored, at the position it was given, and logged
// there; the writers carry on once it is back; a follower that was
// reading through the kill, and one reading the log afresh, each get
// every entry once, in seq order.
func TestWrite_PostgresKilledUnderLoadLosesNothingAcknowledged(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.NewServer(t)
	admin, err := pgx.Connect(ctx, srv.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE killed"); err != nil {
		t.Fatal(err)
	}
	admin.Close(ctx)
	url := srv.URL("killed")
	a, b := open(t, url), open(t, url)
	through := &recorder{}
	through.run(t, b, false)

	var (
		mu    sync.Mutex
		acked = map[string]int64{} // id → position
		fails atomic.Int64
		stop  = make(chan struct{})
		wg    sync.WaitGroup
	)
	pk := newKey()
	for w := range 8 {
		s := a
		if w%2 == 1 {
			s = b
		}
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				e := ev(pk, 1, nostr.Timestamp(i), nostr.Tags{{"w", fmt.Sprint(w)}}, fmt.Sprint(w, "/", i))
				sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				pos, err := s.SaveSequenced(sctx, e)
				cancel()
				if err != nil {
					fails.Add(1)
					// a retry's pause, not a wait: the server is down,
					// and a writer that spun would only burn the CPU
					time.Sleep(10 * time.Millisecond)
					continue
				}
				mu.Lock()
				acked[e.ID] = pos
				mu.Unlock()
			}
		})
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	waitCount := func(n int, what string) {
		if !testwait.Until(2*time.Minute, func() bool { return count() >= n }) {
			t.Fatalf("%s: only %d saves acknowledged", what, count())
		}
	}
	waitCount(300, "before the kill")
	srv.Kill()
	before := count()
	failed := fails.Load()
	testwait.For(t, "the writers to meet the dead server", func() bool { return fails.Load() >= failed+8 })
	srv.Start()
	waitCount(before+300, "after the restart")
	close(stop)
	wg.Wait()
	t.Logf("%d saves acknowledged, %d failed while the server was down", count(), fails.Load())

	log := readLog(t, url)
	logged := map[int64]logEntry{}
	for _, e := range log {
		logged[e.seq] = e
	}
	for id, pos := range acked {
		got := query(t, a, nostr.Filter{IDs: []string{id}})
		if len(got) != 1 {
			t.Fatalf("acknowledged event %s (position %d) is not stored", id, pos)
		}
		if e, ok := logged[pos]; !ok || e.id != id || e.op != store.Saved {
			t.Fatalf("acknowledged event %s: the log holds %+v at its position %d", id, e, pos)
		}
	}
	head := log[len(log)-1].seq
	fresh := &recorder{}
	fresh.run(t, open(t, url), false)
	for _, r := range []*recorder{through, fresh} {
		if !testwait.Until(time.Minute, func() bool { return r.last() >= head }) {
			t.Fatalf("a follower stopped at %d, the log goes to %d", r.last(), head)
		}
	}
	for name, r := range map[string]*recorder{"the follower reading through the kill": through, "a new follower": fresh} {
		got := r.snapshot()
		if len(got) != len(log) {
			t.Fatalf("%s got %d entries, the log holds %d", name, len(got), len(log))
		}
		for i, c := range got {
			if c.Seq != log[i].seq {
				t.Fatalf("%s: entry %d has seq %d, the log's is %d", name, i, c.Seq, log[i].seq)
			}
		}
	}
}
