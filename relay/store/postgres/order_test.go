package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fiatjaf/eventstore"
	"github.com/jackc/pgx/v5"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/internal/pgtest"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/relay/store"
	"github.com/snowclaw/snowclaw/relay/store/postgres"
)

// recorder keeps what one follower was handed.
type recorder struct {
	mu      sync.Mutex
	changes []store.Change
}

func (r *recorder) add(c store.Change) error {
	r.mu.Lock()
	r.changes = append(r.changes, c)
	r.mu.Unlock()
	return nil
}

func (r *recorder) snapshot() []store.Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.changes)
}

func (r *recorder) last() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.changes) == 0 {
		return 0
	}
	return r.changes[len(r.changes)-1].Seq
}

// run follows s with fn (Follow, or Tail when tail) until the test ends.
func (r *recorder) run(t *testing.T, s *postgres.Store, tail bool) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		if tail {
			done <- s.Tail(ctx, 0, r.add)
		} else {
			done <- s.Follow(ctx, 0, r.add)
		}
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("follower ended with %v", err)
		}
	})
}

// logEntry is one row of the change log as the table holds it.
type logEntry struct {
	seq    int64
	op     store.Op
	origin string
	id     string
}

func readLog(t *testing.T, url string) []logEntry {
	t.Helper()
	ctx := context.Background()
	conn := dial(t, url)
	rows, err := conn.Query(ctx, "SELECT seq, op, origin, coalesce(id, event->>'id', '') FROM changes ORDER BY seq")
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (logEntry, error) {
		var e logEntry
		var op int16
		err := r.Scan(&e.seq, &op, &e.origin, &e.id)
		e.op = store.Op(op)
		return e, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Writers on several handles of one database race (grouped saves,
// duplicates sent to two handles at once, replacements of one address,
// deletions); every follower, a Follow and a Tail on every handle, is
// handed every entry of the log exactly once, in the log's seq order,
// whatever order the entries committed in; each save's position is its
// own entry's seq; a Tail's own entries come without their event.
func TestFollow_RacingWritersEveryFollowerGetsEveryEntryOnceInOrder(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	const handles, writers, perWriter = 3, 8, 40
	var hs []*postgres.Store
	var follows, tails []*recorder
	for range handles {
		s := open(t, url)
		hs = append(hs, s)
		f, tl := &recorder{}, &recorder{}
		f.run(t, s, false)
		tl.run(t, s, true)
		follows, tails = append(follows, f), append(tails, tl)
	}

	var mu sync.Mutex
	positions := map[string]int64{} // event id → position SaveSequenced returned
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range writers {
		pk := newKey()
		wg.Go(func() {
			<-start
			var mine []*nostr.Event
			for i := range perWriter {
				s := hs[(w+i)%handles]
				switch {
				case i%10 == 9 && len(mine) > 0:
					victim := mine[0]
					mine = mine[1:]
					if err := s.DeleteEvent(ctx, victim); err != nil {
						t.Error(err)
					}
				case i%10 == 7:
					// one address, every writer: replacements race
					err := s.ReplaceEvent(ctx, ev(sharedKey, 30078, nostr.Timestamp(100+i), nostr.Tags{{"d", "shared"}}, fmt.Sprint(w, "/", i)))
					if err != nil && !errors.Is(err, store.ErrNotNewer) {
						t.Error(err)
					}
				default:
					e := ev(pk, 1, nostr.Timestamp(1000+i), nostr.Tags{{"t", "race"}}, fmt.Sprint(w, "/", i))
					var dupErr error
					var other sync.WaitGroup
					if i%5 == 0 {
						// the same event to another handle at once
						other.Go(func() { _, dupErr = hs[(w+i+1)%handles].SaveSequenced(ctx, e) })
					}
					pos, err := s.SaveSequenced(ctx, e)
					other.Wait()
					switch {
					case err == nil && (dupErr == nil && i%5 == 0):
						t.Errorf("event %s stored twice", e.ID)
					case err == nil:
						mu.Lock()
						positions[e.ID] = pos
						mu.Unlock()
					case errors.Is(err, eventstore.ErrDupEvent) && dupErr == nil:
					default:
						t.Error(err, dupErr)
					}
					mine = append(mine, e)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		return
	}

	log := readLog(t, url)
	head := log[len(log)-1].seq
	// a seq a write drew and did not use is logged as unused, so a clean
	// run leaves no gap for readers to wait out
	for i, e := range log {
		if e.seq != int64(i+1) {
			t.Fatalf("the log has a gap before seq %d", e.seq)
		}
	}
	if h, err := hs[0].Head(ctx); err != nil || h != head {
		t.Fatalf("Head %d, %v; the log's newest entry is %d", h, err, head)
	}
	for _, r := range append(slices.Clone(follows), tails...) {
		if !testwait.Until(time.Minute, func() bool { return r.last() >= head }) {
			t.Fatalf("a follower stopped at %d, the log goes to %d", r.last(), head)
		}
	}
	saved := 0
	for _, e := range log {
		if e.op == store.Saved {
			saved++
		}
	}
	if saved < writers*perWriter/2 {
		t.Fatalf("only %d saves logged", saved)
	}
	for id, pos := range positions {
		i := slices.IndexFunc(log, func(e logEntry) bool { return e.seq == pos })
		if i < 0 || log[i].id != id || log[i].op != store.Saved {
			t.Fatalf("SaveSequenced returned %d for %s; the log has %+v there", pos, id, log[max(i, 0)])
		}
	}
	// a saved event's entry names it; one removed or replaced before a
	// reader came to it comes without its event
	stored := map[string]bool{}
	for _, e := range log {
		if e.op == store.Saved {
			stored[e.id] = false
		}
	}
	ids := slices.Collect(maps.Keys(stored))
	evs, err := hs[0].QueryEvents(ctx, nostr.Filter{IDs: ids, Limit: len(ids)})
	if err != nil {
		t.Fatal(err)
	}
	for e := range evs {
		stored[e.ID] = true
	}
	check := func(name string, got []store.Change, tailOf *postgres.Store) {
		if len(got) != len(log) {
			have := map[int64]bool{}
			for _, c := range got {
				have[c.Seq] = true
			}
			var missing []string
			for _, e := range log {
				if !have[e.seq] {
					missing = append(missing, fmt.Sprintf("%d %s from %s", e.seq, e.op, e.origin))
				}
			}
			t.Fatalf("%s got %d entries, the log holds %d; missing %v", name, len(got), len(log), missing)
		}
		for i, c := range got {
			want := log[i]
			if c.Seq != want.seq || c.Op != want.op || c.Origin != want.origin {
				t.Fatalf("%s entry %d: seq %d %s from %s, the log has seq %d %s from %s", name, i, c.Seq, c.Op, c.Origin, want.seq, want.op, want.origin)
			}
			switch {
			case c.Op == store.Unused:
				if c.Event != nil {
					t.Fatalf("%s: unused entry %d came with an event", name, c.Seq)
				}
			case tailOf != nil && c.Origin == tailOf.Origin():
				if c.Event != nil {
					t.Fatalf("%s: its own entry %d came with its event", name, c.Seq)
				}
			case c.Event == nil && c.Op == store.Saved && !stored[want.id]:
			case c.Event == nil || c.Event.ID != want.id:
				t.Fatalf("%s entry %d: event %v, want %s", name, c.Seq, c.Event, want.id)
			}
		}
	}
	for i := range hs {
		check(fmt.Sprintf("Follow on handle %d", i), follows[i].snapshot(), nil)
		check(fmt.Sprintf("Tail on handle %d", i), tails[i].snapshot(), hs[i])
	}
}

// sharedKey authors the replaceable versions every writer races to store.
var sharedKey = func() string {
	pk, _ := nostr.GetPublicKey(fmt.Sprintf("%064x", 0x5ca1e))
	return pk
}()

// A transaction holds seq g (its event stored, not committed) while
// another handle commits g+1. A follower that has read the log with
// g+1 in it hands over neither: g may still commit. When g commits, both
// come, g first; when g's transaction rolls back, g+1 comes alone, and
// Head returns, though another transaction, which writes elsewhere in
// the database, stays open all along: only writers of the log count.
func TestFollow_LowerSeqCommittedLaterIsNotSkipped(t *testing.T) {
	for _, commit := range []bool{true, false} {
		name := "rolled back"
		if commit {
			name = "committed"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			url := pgtest.New(t)
			a, b := open(t, url), open(t, url)
			reads := make(chan int64, 1000)
			postgres.SetReadHook(a, func(seen, _ int64) {
				select {
				case reads <- seen:
				default:
				}
			})
			got := &recorder{}
			got.run(t, a, true)
			other := dial(t, url)
			elsewhere, err := other.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer elsewhere.Rollback(ctx)
			if _, err := elsewhere.Exec(ctx, "CREATE TABLE elsewhere (x int); INSERT INTO elsewhere VALUES (1)"); err != nil {
				t.Fatal(err)
			}

			pk := newKey()
			held := ev(pk, 1, 1, nil, "held")
			el, err := postgres.Element(held)
			if err != nil {
				t.Fatal(err)
			}
			conn := dial(t, url)
			tx, err := conn.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var id string
			var g int64
			var stored bool
			if err := tx.QueryRow(ctx, postgres.SaveBatchSQL, "["+string(el)+"]", "another-writer", int64(math.MaxInt64), snowclaw.DecisiveKinds).Scan(&id, &g, &stored); err != nil || !stored {
				t.Fatal(stored, err)
			}
			later := ev(pk, 1, 2, nil, "later")
			pos, err := b.SaveSequenced(ctx, later)
			if err != nil || pos <= g {
				t.Fatalf("saved at %d (%v), the held transaction has %d", pos, err, g)
			}
			// barrier: a's follower has read the log holding `later`
			for seen := int64(0); seen < pos; {
				select {
				case seen = <-reads:
				case <-time.After(30 * time.Second):
					t.Fatal("a's follower never read the log after the save on b")
				}
			}
			if c := got.snapshot(); len(c) != 0 {
				t.Fatalf("handed over %d entries (first seq %d) while seq %d may still commit", len(c), c[0].Seq, g)
			}
			want := []int64{pos}
			if commit {
				err = tx.Commit(ctx)
				want = []int64{g, pos}
			} else {
				err = tx.Rollback(ctx)
			}
			if err != nil {
				t.Fatal(err)
			}
			// a follower that stops short fails the comparison below
			testwait.Until(30*time.Second, func() bool { return got.last() >= pos })
			var seqs []int64
			for _, c := range got.snapshot() {
				seqs = append(seqs, c.Seq)
			}
			if !slices.Equal(seqs, want) {
				t.Fatalf("handed over seqs %v, want %v", seqs, want)
			}
			if commit && got.snapshot()[0].Event.ID != held.ID {
				t.Fatalf("entry %d is not the held event", g)
			}
			hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if h, err := b.Head(hctx); err != nil || h != pos {
				t.Fatalf("Head %d, %v; want %d", h, err, pos)
			}
		})
	}
}

// Concurrent saves share statements, and a statement PostgreSQL refuses
// (here a trigger refuses one event) is retried one event at a time: the
// others are stored and get their own positions, the refused one fails
// alone, a duplicate is a duplicate.
func TestSave_GroupCommitSharesStatementsAndIsolatesRefusals(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	s := open(t, url)
	conn := dial(t, url)
	_, err := conn.Exec(ctx, `CREATE SEQUENCE statements;
		CREATE FUNCTION count_statement() RETURNS trigger LANGUAGE plpgsql AS
			$$ BEGIN PERFORM nextval('statements'); RETURN NULL; END $$;
		CREATE TRIGGER count_statement AFTER INSERT ON events FOR EACH STATEMENT EXECUTE FUNCTION count_statement();
		CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS
			$$ BEGIN IF NEW.content = 'poison' THEN RAISE EXCEPTION 'poisoned'; END IF; RETURN NEW; END $$;
		CREATE TRIGGER poison BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION poison();`)
	if err != nil {
		t.Fatal(err)
	}
	pk := newKey()
	stored := save(t, s, ev(pk, 1, 1, nil, "stored before"))
	const n = 200
	evs := make([]*nostr.Event, n)
	for i := range evs {
		evs[i] = ev(pk, 1, nostr.Timestamp(10+i), nil, fmt.Sprint(i))
	}
	evs[50] = ev(pk, 1, 5, nil, "poison")
	evs[120] = stored
	pos := make([]int64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range evs {
		wg.Go(func() {
			<-start
			pos[i], errs[i] = s.SaveSequenced(ctx, evs[i])
		})
	}
	close(start)
	wg.Wait()
	seen := map[int64]bool{}
	for i := range evs {
		switch {
		case i == 50:
			if errs[i] == nil {
				t.Errorf("the poisoned event was stored")
			}
		case i == 120:
			if !errors.Is(errs[i], eventstore.ErrDupEvent) {
				t.Errorf("the stored event again: %v, want ErrDupEvent", errs[i])
			}
		case errs[i] != nil:
			t.Errorf("event %d failed with its batch: %v", i, errs[i])
		case seen[pos[i]] || pos[i] <= 0:
			t.Errorf("event %d got position %d twice or none", i, pos[i])
		default:
			seen[pos[i]] = true
		}
	}
	if n, _ := s.CountEvents(ctx, nostr.Filter{Authors: []string{pk}}); n != 199 {
		t.Errorf("%d events stored, want 198 and the one stored before", n)
	}
	var statements int64
	if err := conn.QueryRow(ctx, "SELECT last_value FROM statements").Scan(&statements); err != nil {
		t.Fatal(err)
	}
	// one per batch, plus one per event retried alone after the refusal
	if statements >= n {
		t.Errorf("%d insert statements for %d concurrent saves: they were not grouped", statements, n)
	}
	t.Logf("%d concurrent saves in %d insert statements", n, statements)
}

// A save whose decision saw the log up to a position (WithDecidedAt) is
// refused with ErrStale, storing nothing and drawing no seq, when another
// instance's decisive change (group state, a deletion) came after that
// position; another instance's note, and this instance's own later
// changes, do not count. In one statement, the refused and the accepted
// are told apart.
func TestSave_DecidedAtRefusesWhatMissedAnotherInstancesChange(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	a, b := open(t, url), open(t, url)
	pk := newKey()
	save(t, a, ev(pk, 1, 1, nil, "a's own"))
	theirs, err := b.SaveSequenced(ctx, ev(pk, snowclaw.KindRemoveUser, 2, nostr.Tags{{"h", "g"}, {"p", pk}}, ""))
	if err != nil {
		t.Fatal(err)
	}
	missed := ev(pk, 1, 3, nil, "decided before b's")
	if _, err := a.SaveSequenced(store.WithDecidedAt(ctx, theirs-1), missed); !errors.Is(err, store.ErrStale) {
		t.Fatalf("a save decided before another instance's removal: %v, want ErrStale", err)
	}
	if got := query(t, a, nostr.Filter{IDs: []string{missed.ID}}); len(got) != 0 {
		t.Fatal("the refused save was stored")
	}
	if _, err := a.SaveSequenced(store.WithDecidedAt(ctx, theirs), missed); err != nil {
		t.Fatalf("decided after it: %v", err)
	}
	save(t, a, ev(pk, 1, 4, nil, "a's own, later"))
	if _, err := a.SaveSequenced(store.WithDecidedAt(ctx, theirs), ev(pk, 1, 5, nil, "after a's own")); err != nil {
		t.Fatalf("a's own later change made a save stale: %v", err)
	}
	note := save(t, b, ev(pk, 1, 6, nil, "b's note"))
	if _, err := a.SaveSequenced(store.WithDecidedAt(ctx, theirs), ev(pk, 1, 7, nil, "after b's note")); err != nil {
		t.Fatalf("another instance's note made a save stale: %v", err)
	}
	if err := b.DeleteEvent(ctx, note); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SaveSequenced(store.WithDecidedAt(ctx, theirs), ev(pk, 1, 8, nil, "before b's deletion")); !errors.Is(err, store.ErrStale) {
		t.Fatalf("a save decided before another instance's deletion: %v, want ErrStale", err)
	}
	log := readLog(t, url)
	theirs = log[len(log)-1].seq // the deletion's entry

	const n = 40
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		pos := theirs - 1 // stale
		if i%2 == 0 {
			pos = theirs
		}
		wg.Go(func() {
			<-start
			_, errs[i] = a.SaveSequenced(store.WithDecidedAt(ctx, pos), ev(pk, 1, nostr.Timestamp(100+i), nil, fmt.Sprint(i)))
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if (i%2 == 0) != (err == nil) || err != nil && !errors.Is(err, store.ErrStale) {
			t.Fatalf("save %d (stale: %v): %v", i, i%2 == 1, err)
		}
	}
	for i, e := range readLog(t, url) {
		if e.seq != int64(i+1) || e.op != store.Saved && e.seq != theirs {
			t.Fatalf("log entry %d: seq %d %s; a refused save drew a seq", i, e.seq, e.op)
		}
	}
}
