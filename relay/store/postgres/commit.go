package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fiatjaf/eventstore"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/relay/store"
)

// Group commit. Every commit costs a WAL flush (synchronous_commit is on,
// so an OK means the event is on disk) and a round trip; saves arriving
// together therefore share one statement, one implicit transaction and
// one flush, and the answer to each comes after that commit. One
// statement is in flight at a time per store handle: the next cannot
// commit before the flush of the one in flight anyway, and the writers
// answered by that one come back with their next saves soon after, so
// the next statement waits for them — until as many saves are queued as
// were waiting at the busiest moment of the last statements, or the
// oldest has waited half a statement's time (at least batchMin, at most
// batchWindow), counted from when the statement before was answered. A
// lone writer is not kept waiting: the estimate is one once the last
// concurrencyMemory statements held one save each.
const (
	// maxBatch bounds the events of one statement.
	maxBatch = 256
	// batchMin and batchWindow bound how long a save waits for others.
	batchMin    = 200 * time.Microsecond
	batchWindow = 2 * time.Millisecond
	// concurrencyMemory is how many statements the estimate of the
	// writers' concurrency looks back on.
	concurrencyMemory = 4
	// commitTimeout bounds one statement; the saves in it fail with it.
	commitTimeout = 30 * time.Second
)

// saveBatch stores the events of $1 (a JSON array of element()s) that are
// not stored yet, logs each with its own seq in the same statement and
// returns, for each seq it drew, the event's id, the seq and whether it
// was stored. A stored id, or a replaceable address already holding a
// version, is skipped, never an error: one duplicate must not fail the
// others. One racing in from another statement (ON CONFLICT) has drawn a
// seq already: that seq is logged as unused (op 3), so readers need not
// wait to learn it will never hold anything. An element with a pos (the
// log position its decision saw, store.WithDecidedAt) is stored only if
// no decisive change by another instance ($2 is this one) came after it:
// a deletion, or a saved event of a kind in $4 (snowclaw.DecisiveKinds;
// the rest cannot change what the rules decided). $3 is the lowest such
// pos. Those that did come after are returned with a NULL seq, and draw
// none. An entry repeats its event only for a decisive kind (schema step
// 6). The rows are inserted in id order, so two statements holding the
// same ids wait for each other in one order and never deadlock.
const saveBatch = `WITH input AS (
		SELECT x.*
		FROM jsonb_array_elements($1::jsonb) AS j(e)
		CROSS JOIN LATERAL jsonb_to_record(j.e) AS x(id text, pubkey text, created_at bigint,
			kind integer, tags jsonb, content text, sig text, tv text[], addr text, pos bigint)),
	other AS (
		SELECT max(seq) AS seq FROM changes WHERE seq > $3 AND origin <> $2
		AND (op = 2 OR op = 1 AND coalesce(kind, (event->>'kind')::integer) = ANY($4::integer[]))),
	fresh AS MATERIALIZED (
		SELECT input.*, ` + nextSeq + ` AS seq FROM input
		-- a subquery per row: an index lookup, never a join the planner
		-- could make a scan of the whole table
		WHERE (SELECT true FROM events e WHERE e.id = input.id) IS NULL
		AND (input.pos IS NULL OR input.pos >= coalesce((SELECT seq FROM other), 0))),
	ins AS (
		INSERT INTO events (id, pubkey, created_at, kind, tags, content, sig, tagvalues, addr, seq)
		SELECT id, pubkey, created_at, kind, tags, content, sig, tv, addr, seq FROM fresh
		ORDER BY id
		ON CONFLICT DO NOTHING
		RETURNING id, seq, kind, CASE WHEN kind = ANY($4::integer[]) THEN jsonb_build_object('id', id,
			'pubkey', pubkey, 'created_at', created_at, 'kind', kind, 'tags', tags, 'content', content,
			'sig', sig) END AS body),
	unused AS (
		SELECT id, seq FROM fresh WHERE seq NOT IN (SELECT seq FROM ins)),
	logged AS (
		INSERT INTO changes (seq, op, origin, id, kind, event)
		SELECT seq, 1, $2, id, kind, body FROM ins
		UNION ALL SELECT seq, 3, $2, NULL, NULL, NULL FROM unused)
	SELECT id, seq, true FROM ins
	UNION ALL SELECT id, seq, false FROM unused
	UNION ALL SELECT id, NULL, NULL FROM input WHERE input.pos < (SELECT seq FROM other)`

// saveReq is one save waiting for its statement.
type saveReq struct {
	id    string
	el    []byte
	pos   int64        // the position its decision saw; -1 for none
	at    time.Time    // when it was queued
	state atomic.Int32 // reqQueued, reqTaken or reqAbandoned
	seq   int64
	err   error
	done  chan struct{}
}

const (
	reqQueued int32 = iota
	reqTaken
	reqAbandoned
)

// committer batches saves into statements.
type committer struct {
	s     *Store
	mu    sync.Mutex
	queue []*saveReq
	wake  chan struct{} // a save was queued
	ctx   context.Context
	done  sync.WaitGroup

	waiting int                    // saves queued or in the statement in flight
	peak    int                    // the most waiting since the last statement went out
	peaks   [concurrencyMemory]int // peak of each of the last statements
	next    int                    // where the next peak goes in peaks
	latency time.Duration          // the last statement's, send to answer
	free    time.Time              // when the last statement was answered
}

func newCommitter(s *Store, ctx context.Context) *committer {
	c := &committer{s: s, wake: make(chan struct{}, 1), ctx: ctx}
	c.done.Add(1)
	go c.run()
	return c
}

func (c *committer) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// save queues one element and waits for its statement's outcome. A save
// whose ctx ends before a statement took it is dropped, stored nowhere.
func (c *committer) save(ctx context.Context, id string, el []byte, pos int64) (int64, error) {
	r := &saveReq{id: id, el: el, pos: pos, at: time.Now(), done: make(chan struct{})}
	c.mu.Lock()
	if c.ctx.Err() != nil {
		c.mu.Unlock()
		return 0, errClosed
	}
	c.queue = append(c.queue, r)
	c.waiting++
	c.peak = max(c.peak, c.waiting)
	c.mu.Unlock()
	c.signal()
	select {
	case <-r.done:
		return r.seq, r.err
	case <-ctx.Done():
		if r.state.CompareAndSwap(reqQueued, reqAbandoned) {
			return 0, ctx.Err()
		}
		// taken: the statement decides; its outcome is unknown here
		return 0, ctx.Err()
	}
}

var errClosed = errors.New("postgres store: closed")

func (c *committer) run() {
	defer c.done.Done()
	for {
		batch := c.take()
		if batch == nil {
			return
		}
		began := time.Now()
		c.commit(batch)
		c.mu.Lock()
		c.waiting -= len(batch)
		c.latency = time.Since(began)
		c.free = time.Now()
		c.mu.Unlock()
	}
}

// take waits for saves and returns up to maxBatch of them, once as many
// are queued as the writers' concurrency (the most saves waiting during
// each of the last statements) or the oldest has waited its window. nil
// when the store closes.
func (c *committer) take() []*saveReq {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		c.mu.Lock()
		if c.ctx.Err() != nil {
			q := c.queue
			c.queue = nil
			c.mu.Unlock()
			fail(q, errClosed)
			return nil
		}
		var wait time.Duration
		if n := len(c.queue); n > 0 {
			target := 1
			for _, p := range c.peaks {
				target = max(target, p)
			}
			window := min(max(c.latency/2, batchMin), batchWindow)
			// a save that came while a statement was in flight had to
			// wait anyway: its window starts when the statement is done
			wait = window - time.Since(later(c.queue[0].at, c.free))
			if n >= min(target, maxBatch) || wait <= 0 {
				k := min(n, maxBatch)
				batch := make([]*saveReq, 0, k)
				for _, r := range c.queue[:k] {
					if r.state.CompareAndSwap(reqQueued, reqTaken) {
						batch = append(batch, r)
					} else {
						c.waiting-- // abandoned before it was sent
					}
				}
				c.queue = append(c.queue[:0:0], c.queue[k:]...)
				c.peaks[c.next] = c.peak
				c.next = (c.next + 1) % concurrencyMemory
				c.peak = c.waiting
				c.mu.Unlock()
				if len(batch) == 0 {
					continue
				}
				return batch
			}
		}
		c.mu.Unlock()
		var timeout <-chan time.Time
		if wait > 0 {
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			timeout = timer.C
		}
		select {
		case <-c.wake:
		case <-timeout:
		case <-c.ctx.Done():
		}
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func fail(rs []*saveReq, err error) {
	for _, r := range rs {
		r.err = err
		close(r.done)
	}
}

// commit runs one statement for batch and answers every save in it. When
// PostgreSQL refuses the statement itself, each half is tried on its own,
// and so on down to single saves: what one event holds never fails the
// others, and finding it costs a few statements, not one per event.
func (c *committer) commit(batch []*saveReq) {
	c.settle(batch)
	for _, r := range batch {
		close(r.done)
	}
}

func (c *committer) settle(batch []*saveReq) {
	err := c.statement(batch)
	var pe *pgconn.PgError
	switch {
	case err == nil:
	case len(batch) > 1 && errors.As(err, &pe):
		c.settle(batch[:len(batch)/2])
		c.settle(batch[len(batch)/2:])
	default:
		for _, r := range batch {
			r.err = err
		}
	}
}

// statement stores batch in one statement and sets each save's seq, or
// ErrDupEvent for a save whose id was stored already (by an earlier
// statement, or earlier in this batch), or store.ErrStale. The error is
// the statement's.
func (c *committer) statement(batch []*saveReq) error {
	arr := make([]byte, 0, 1024*len(batch))
	arr = append(arr, '[')
	first := make(map[string]*saveReq, len(batch))
	var from int64 = math.MaxInt64
	for _, r := range batch {
		if first[r.id] != nil {
			continue
		}
		first[r.id] = r
		if len(arr) > 1 {
			arr = append(arr, ',')
		}
		if r.pos >= 0 {
			from = min(from, r.pos)
			arr = append(append(append(arr, r.el[:len(r.el)-1]...), `,"pos":`...), strconv.AppendInt(nil, r.pos, 10)...)
			arr = append(arr, '}')
		} else {
			arr = append(arr, r.el...)
		}
	}
	arr = append(arr, ']')
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	rows, err := c.s.pool.Query(ctx, saveBatch, string(arr), c.s.opts.Origin, from, snowclaw.DecisiveKinds)
	if err != nil {
		return fmt.Errorf("storing events: %w", err)
	}
	stored := make(map[string]int64, len(batch))
	stale := make(map[string]bool)
	var seqs, unused []int64
	for rows.Next() {
		var id string
		var seq *int64
		var ok *bool
		if err := rows.Scan(&id, &seq, &ok); err != nil {
			rows.Close()
			return fmt.Errorf("storing events: %w", err)
		}
		switch {
		case seq == nil:
			stale[id] = true
		case *ok:
			stored[id] = *seq
			seqs = append(seqs, *seq)
		default:
			unused = append(unused, *seq)
		}
	}
	// Err is known only after the commit (rows read to ReadyForQuery)
	if err := rows.Err(); err != nil {
		return fmt.Errorf("storing events: %w", err)
	}
	c.s.committed(store.Saved, seqs...)
	c.s.committed(store.Unused, unused...)
	for _, r := range batch {
		seq, ok := stored[r.id]
		switch {
		case ok && first[r.id] == r:
			r.seq = seq
		case stale[r.id] && (first[r.id] == r || r.pos >= 0):
			r.err = store.ErrStale
		case stale[r.id]:
			// the same event, sent again meanwhile without a position
			// to check, shared the other's fate: try it alone
			if err := c.statement([]*saveReq{r}); err != nil {
				r.err = err
			}
		default:
			r.err = eventstore.ErrDupEvent
		}
	}
	return nil
}

// wait returns once the workers have stopped (the store's context
// ended); saves still queued have failed with errClosed.
func (c *committer) wait() { c.done.Wait() }
