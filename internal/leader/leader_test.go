package leader_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/snowclaw/snowclaw/internal/leader"
	"github.com/snowclaw/snowclaw/internal/pgtest"
	"github.com/snowclaw/snowclaw/internal/testwait"
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
// server sees it) its term ends and one candidate leads again.
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
	// b's process is alive here (only its session died), so it runs for
	// the lead again at once: a2 or b leads next, never both
	got := map[term]bool{next(t, terms): true, next(t, terms): true}
	if !got[term{"b", false}] || got[term{"a2", true}] == got[term{"b", true}] {
		t.Fatalf("after the leader's session died: %v, want b's term over and one new term, a2's or b's", got)
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

// records keeps what a logger wrote, for a test to wait on.
type records struct {
	mu   sync.Mutex
	list []slog.Record
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, rec.Clone())
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

// with returns the records whose message is msg, each as its attributes.
func (r *records) with(msg string) []map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]string
	for _, rec := range r.list {
		if rec.Message != msg {
			continue
		}
		attrs := map[string]string{"level": rec.Level.String()}
		rec.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.String(); return true })
		out = append(out, attrs)
	}
	return out
}

// await waits until msg has been logged at least n times.
func (r *records) await(t *testing.T, msg string, n int) []map[string]string {
	t.Helper()
	var got []map[string]string
	testwait.Within(t, 20*time.Second, fmt.Sprintf("%q logged %d times", msg, n), func() bool {
		got = r.with(msg)
		return len(got) >= n
	})
	return got
}

// candidateLog runs one named election whose log is kept.
func candidateLog(t *testing.T, url, name string, pos int64) (*records, context.CancelFunc) {
	log := &records{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		leader.Run(ctx, leader.Options{URL: url, Name: name, Retry: 20 * time.Millisecond, Check: 50 * time.Millisecond,
			Position: func() int64 { return pos }, Logger: slog.New(log)},
			func(lctx context.Context, _ leader.Previous) { <-lctx.Done() })
	}()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	return log, stop
}

const (
	standingBy = "standing by: another instance runs the agent"
	stillHeld  = "the lock is held: standing by"
	leading    = "leading: this instance runs the agent"
)

// TestRun_StandbyLogsWhoLeads: an instance that does not get the lock
// says once that it stands by, naming the leader and how far it had got,
// however often it tries again; when the lead changes hands the new
// leader is the one named.
func TestRun_StandbyLogsWhoLeads(t *testing.T) {
	url := pgtest.New(t)
	aLog, stopA := candidateLog(t, url, "relay-a", 42)
	aLog.await(t, leading, 1)
	bLog, _ := candidateLog(t, url, "relay-b", 7)
	// the barrier: b has tried the lock again several times since
	bLog.await(t, stillHeld, 5)
	told := bLog.with(standingBy)
	if len(told) != 1 {
		t.Fatalf("b said it stands by %d times over 5 tries, want once: %v", len(told), told)
	}
	if got := told[0]; got["level"] != "INFO" || got["leader"] != "relay-a" || got["leader_position"] != "42" || got["leader_heartbeat_age"] == "" {
		t.Fatalf("standing by: %v, want leader relay-a at position 42 and its heartbeat's age", got)
	}
	if got := aLog.with(leading)[0]["instance"]; got != "relay-a" {
		t.Errorf("the leader logged instance %q", got)
	}

	// a leaves: b leads, and c, arriving, names b
	stopA()
	bLog.await(t, leading, 1)
	cLog, _ := candidateLog(t, url, "relay-c", 0)
	cLog.await(t, stillHeld, 5)
	told = cLog.with(standingBy)
	if len(told) != 1 || told[0]["leader"] != "relay-b" || told[0]["leader_position"] != "7" {
		t.Fatalf("c, standing by: %v, want once, naming relay-b at position 7", told)
	}
}
