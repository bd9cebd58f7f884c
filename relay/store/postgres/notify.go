package postgres

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/snowclaw/snowclaw/relay/store"
)

// What a commit tells others. The followers of other instances learn of
// new entries from a notification; this instance's own follower (Tail)
// learns of them in process and never reads them back.
//
// The notification is sent after the commit, in a statement of its own,
// not by the writing transaction: PostgreSQL queues notifications under
// one cluster-wide lock that a notifying transaction holds until its
// commit is flushed, which would make every write in the cluster commit
// one at a time. The notifying statement commits asynchronously (it has
// nothing to keep: a notification lost in a crash only delays followers
// until their next poll), so it holds that lock for microseconds.

// committed reports entries this store handle has committed: to its own
// Tail, and (the newest of them) to the other instances.
func (s *Store) committed(op store.Op, seqs ...int64) {
	if len(seqs) == 0 {
		return
	}
	s.own.add(op, seqs)
	s.note.post(seqs)
}

// notifier sends one notification per batch of commits, off the path of
// the writes: while one is being sent, and for notifyEvery after it
// went out, newer seqs wait and go in the next. The first commit after a
// quiet spell is told at once; under load every follower of the cluster
// reads once per notifyEvery per writing instance instead of once per
// statement, so a read carries several statements' entries. A reader
// that needs the entries sooner (Pending found them: a request waits in
// caughtUp) is woken by Pending itself.
type notifier struct {
	s    *Store
	mu   sync.Mutex
	want int64 // the newest seq committed here
	kick chan struct{}
}

func (n *notifier) post(seqs []int64) {
	n.mu.Lock()
	for _, q := range seqs {
		n.want = max(n.want, q)
	}
	n.mu.Unlock()
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

// notifyPayload is a notification's payload: the origin and the newest
// seq it committed.
func notifyPayload(origin string, seq int64) string {
	return origin + ":" + strconv.FormatInt(seq, 10)
}

// parsePayload reads notifyPayload; ok false for anything else (a
// notification sent by hand, or by an older version: read the log).
func parsePayload(p string) (origin string, seq int64, ok bool) {
	origin, num, found := strings.Cut(p, ":")
	if !found {
		return "", 0, false
	}
	seq, err := strconv.ParseInt(num, 10, 64)
	return origin, seq, err == nil
}

// notifyEvery spaces one instance's notifications under load. Every
// notification costs each follower a read of the log and PostgreSQL the
// notifying transaction and its delivery: with two instances writing
// 1,000–1,400 events/s, 20 ms instead of 5 ms took PostgreSQL's CPU per
// event down by about a fifth, for 15–20 ms more between an event's
// commit and its delivery on another instance (snowbench cluster;
// docs/scaling.md). A request that must see the entries does not wait
// for it (Pending wakes the reader).
const notifyEvery = 20 * time.Millisecond

func (n *notifier) run(ctx context.Context) {
	var sent int64
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.kick:
		}
		if d := notifyEvery - time.Since(last); d > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(d):
			}
		}
		n.mu.Lock()
		want := n.want
		n.mu.Unlock()
		if want <= sent {
			continue
		}
		last = time.Now()
		_, err := n.s.pool.Exec(ctx, `SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, $2)`,
			channel, notifyPayload(n.s.opts.Origin, want))
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			// followers poll every pollEvery anyway; try again soon
			n.s.log.Warn("notifying the change log's followers", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			select {
			case n.kick <- struct{}{}:
			default:
			}
			continue
		}
		sent = want
	}
}

// ownLog holds the entries this store handle committed that its Tail has
// not passed yet. Nothing is kept while no Tail reads.
type ownLog struct {
	mu      sync.Mutex
	on      bool
	entries map[int64]store.Op
	wake    chan struct{}
}

// maxOwn bounds the entries kept for a Tail that is stuck behind a gap;
// past it, the Tail reads them from the log like anyone else's.
const maxOwn = 100_000

func (o *ownLog) add(op store.Op, seqs []int64) {
	o.mu.Lock()
	if !o.on {
		o.mu.Unlock()
		return
	}
	for _, q := range seqs {
		if len(o.entries) >= maxOwn {
			break
		}
		o.entries[q] = op
	}
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// start begins keeping entries for a Tail; false when one reads already.
func (o *ownLog) start() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.on {
		return false
	}
	o.on, o.entries = true, make(map[int64]store.Op)
	return true
}

func (o *ownLog) stop() {
	o.mu.Lock()
	o.on, o.entries = false, nil
	o.mu.Unlock()
}

// take removes and returns the entry seq, if this handle committed it.
func (o *ownLog) take(seq int64) (store.Op, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	op, ok := o.entries[seq]
	if ok {
		delete(o.entries, seq)
	}
	return op, ok
}

// any reports whether entries after seq wait.
func (o *ownLog) any(after int64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for q := range o.entries {
		if q > after {
			return true
		}
		delete(o.entries, q) // passed already (read from the log)
	}
	return false
}

// headReads answers Pending. Concurrent callers share one read, but
// never one sent before they asked: what a caller learns must include
// every change committed before its call.
type headReads struct {
	s       *Store
	mu      sync.Mutex
	running bool
	waiting []*headReq
}

type headReq struct {
	after int64
	head  int64
	err   error
	done  chan struct{}
}

// headTimeout bounds one read of the head.
const headTimeout = 10 * time.Second

func (h *headReads) pending(ctx context.Context, after int64) (int64, error) {
	r := &headReq{after: after, done: make(chan struct{})}
	h.mu.Lock()
	h.waiting = append(h.waiting, r)
	if !h.running {
		h.running = true
		go h.loop()
	}
	h.mu.Unlock()
	select {
	case <-r.done:
		return r.head, r.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (h *headReads) loop() {
	for {
		h.mu.Lock()
		batch := h.waiting
		h.waiting = nil
		if len(batch) == 0 {
			h.running = false
			h.mu.Unlock()
			return
		}
		h.mu.Unlock()
		from := batch[0].after
		for _, r := range batch {
			from = min(from, r.after)
		}
		ctx, cancel := context.WithTimeout(context.Background(), headTimeout)
		var seq *int64
		err := h.s.pool.QueryRow(ctx, "SELECT max(seq) FROM changes WHERE seq > $1 AND origin <> $2", from, h.s.opts.Origin).Scan(&seq)
		cancel()
		for _, r := range batch {
			switch {
			case err != nil:
				r.err = err
			case seq != nil && *seq > r.after:
				r.head = *seq
				// the caller will wait for the follower: have it read now
				// rather than at the writer's next notification
				h.s.wakeFollowers()
			}
			close(r.done)
		}
	}
}

// wakeFollowers has this handle's followers read the log now.
func (s *Store) wakeFollowers() {
	select {
	case s.readNow <- struct{}{}:
	default:
	}
}
