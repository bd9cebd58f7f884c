package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fiatjaf/eventstore"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/snowclaw/snowclaw/relay/store"
)

// Group commit. Every commit costs a WAL flush (synchronous_commit is on,
// so an OK means the event is on disk) and a round trip; saves arriving
// together therefore share one statement, one implicit transaction and
// one flush. No save waits for a batch to fill: the first statement goes
// out at once, and only while one is already in flight does the next
// wait, at most batchWindow, for more saves to join it. Each save's
// answer comes after the commit of its own statement.
const (
	// commitWorkers is how many statements may be in flight at once.
	commitWorkers = 2
	// maxBatch bounds the events of one statement.
	maxBatch = 256
	// batchWindow is the longest a save waits for others to join it.
	batchWindow = 500 * time.Microsecond
	// commitTimeout bounds one statement; the saves in it fail with it.
	commitTimeout = 30 * time.Second
)

// saveBatch stores the events of $1 (a JSON array of element()s) that are
// not stored yet, logs each with its own seq in the same statement and
// returns id, seq and whether it was stored for each seq it drew. A
// stored id, or a replaceable address already holding a version, is
// skipped, never an error: one duplicate must not fail the others. One
// racing in from another statement (ON CONFLICT) has drawn a seq already:
// that seq is logged as unused (op 3), so readers need not wait to learn
// it will never hold anything. The rows are inserted in id order, so two
// statements holding the same ids wait for each other in one order and
// never deadlock. nextSeq draws each seq after the transaction has its
// xid.
const saveBatch = `WITH input AS (
		SELECT j.e, x.*
		FROM jsonb_array_elements($1::jsonb) AS j(e)
		CROSS JOIN LATERAL jsonb_to_record(j.e) AS x(id text, pubkey text, created_at bigint,
			kind integer, tags jsonb, content text, sig text, tv text[], addr text)),
	fresh AS MATERIALIZED (
		SELECT input.*, ` + nextSeq + ` AS seq FROM input
		WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = input.id)),
	ins AS (
		INSERT INTO events (id, pubkey, created_at, kind, tags, content, sig, tagvalues, addr, seq)
		SELECT id, pubkey, created_at, kind, tags, content, sig, tv, addr, seq FROM fresh
		ORDER BY id
		ON CONFLICT DO NOTHING
		RETURNING id),
	logged AS (
		INSERT INTO changes (seq, op, origin, event)
		SELECT f.seq, CASE WHEN ins.id IS NULL THEN 3 ELSE 1 END, $2,
			CASE WHEN ins.id IS NULL THEN NULL ELSE f.e - 'tv' - 'addr' END
		FROM fresh f LEFT JOIN ins USING (id))
	SELECT f.id, f.seq, ins.id IS NOT NULL FROM fresh f LEFT JOIN ins USING (id)`

// saveReq is one save waiting for its statement.
type saveReq struct {
	id    string
	el    []byte
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
	busy  int           // statements in flight
	wake  chan struct{} // a save was queued or a statement ended
	ctx   context.Context
	done  sync.WaitGroup
}

func newCommitter(s *Store, ctx context.Context) *committer {
	c := &committer{s: s, wake: make(chan struct{}, 1), ctx: ctx}
	for range commitWorkers {
		c.done.Add(1)
		go c.run()
	}
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
func (c *committer) save(ctx context.Context, id string, el []byte) (int64, error) {
	r := &saveReq{id: id, el: el, done: make(chan struct{})}
	c.mu.Lock()
	if c.ctx.Err() != nil {
		c.mu.Unlock()
		return 0, errClosed
	}
	c.queue = append(c.queue, r)
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
		c.commit(batch)
		c.mu.Lock()
		c.busy--
		c.mu.Unlock()
		c.signal()
	}
}

// take waits for saves and returns up to maxBatch of them: at once when
// no statement is in flight, else once maxBatch are queued or the oldest
// has waited batchWindow. nil when the store closes.
func (c *committer) take() []*saveReq {
	var deadline *time.Timer
	defer func() {
		if deadline != nil {
			deadline.Stop()
		}
	}()
	expired := false
	for {
		c.mu.Lock()
		if c.ctx.Err() != nil {
			q := c.queue
			c.queue = nil
			c.mu.Unlock()
			fail(q, errClosed)
			return nil
		}
		n := len(c.queue)
		if n > 0 && (c.busy == 0 || n >= maxBatch || expired) {
			k := min(n, maxBatch)
			batch := make([]*saveReq, 0, k)
			for _, r := range c.queue[:k] {
				if r.state.CompareAndSwap(reqQueued, reqTaken) {
					batch = append(batch, r)
				}
			}
			c.queue = append(c.queue[:0:0], c.queue[k:]...)
			more := len(c.queue) > 0
			if len(batch) > 0 {
				c.busy++
			}
			c.mu.Unlock()
			if more {
				c.signal() // the rest for another worker
			}
			if len(batch) == 0 {
				expired = false
				continue
			}
			return batch
		}
		c.mu.Unlock()
		var timeout <-chan time.Time
		if n > 0 {
			if deadline == nil {
				deadline = time.NewTimer(batchWindow)
			}
			timeout = deadline.C
		}
		select {
		case <-c.wake:
		case <-timeout:
			expired, deadline = true, nil
		case <-c.ctx.Done():
		}
	}
}

func fail(rs []*saveReq, err error) {
	for _, r := range rs {
		r.err = err
		close(r.done)
	}
}

// commit runs one statement for batch and answers every save in it. When
// PostgreSQL refuses the statement itself, each save is tried alone, so
// that what one event holds never fails the others.
func (c *committer) commit(batch []*saveReq) {
	err := c.statement(batch)
	var pe *pgconn.PgError
	if err != nil && len(batch) > 1 && errors.As(err, &pe) {
		for _, r := range batch {
			if err := c.statement([]*saveReq{r}); err != nil {
				r.err = err
			}
			close(r.done)
		}
		return
	}
	if err != nil {
		for _, r := range batch {
			r.err = err
		}
	}
	for _, r := range batch {
		close(r.done)
	}
}

// statement stores batch in one statement and sets each save's seq, or
// ErrDupEvent for a save whose id was stored already (by an earlier
// statement, or earlier in this batch). The error is the statement's.
func (c *committer) statement(batch []*saveReq) error {
	arr := make([]byte, 0, 1024*len(batch))
	arr = append(arr, '[')
	first := make(map[string]*saveReq, len(batch))
	for _, r := range batch {
		if first[r.id] != nil {
			continue
		}
		first[r.id] = r
		if len(arr) > 1 {
			arr = append(arr, ',')
		}
		arr = append(arr, r.el...)
	}
	arr = append(arr, ']')
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	rows, err := c.s.pool.Query(ctx, saveBatch, string(arr), c.s.opts.Origin)
	if err != nil {
		return fmt.Errorf("storing events: %w", err)
	}
	stored := make(map[string]int64, len(batch))
	var seqs, unused []int64
	for rows.Next() {
		var id string
		var seq int64
		var ok bool
		if err := rows.Scan(&id, &seq, &ok); err != nil {
			rows.Close()
			return fmt.Errorf("storing events: %w", err)
		}
		if ok {
			stored[id] = seq
			seqs = append(seqs, seq)
		} else {
			unused = append(unused, seq)
		}
	}
	// Err is known only after the commit (rows read to ReadyForQuery)
	if err := rows.Err(); err != nil {
		return fmt.Errorf("storing events: %w", err)
	}
	for _, r := range batch {
		seq, ok := stored[r.id]
		if ok && first[r.id] == r {
			r.seq = seq
		} else {
			r.err = eventstore.ErrDupEvent
		}
	}
	c.s.committed(store.Saved, seqs...)
	c.s.committed(store.Unused, unused...)
	return nil
}

// wait returns once the workers have stopped (the store's context
// ended); saves still queued have failed with errClosed.
func (c *committer) wait() { c.done.Wait() }
