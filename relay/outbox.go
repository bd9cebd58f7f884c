package relay

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"
)

// Every websocket has one outbox and one writer goroutine, the only one
// that writes data frames to its socket. A publisher's broadcast only
// queues (offer never waits), so a subscriber that does not read cannot
// hold anyone else up; when its queue passes SendQueueBytes it is told
// why and closed. Answers to the client's own requests (OK, stored
// events, EOSE) wait for room instead (put): reading slowly slows only
// that client, and they stop at half the queue so live events keep the
// other half. One FIFO keeps NIP-01's order: an event broadcast before an
// OK or EOSE is written before it.

// tooSlowReason is the NOTICE and close-frame reason for a client whose
// queue overflowed.
const tooSlowReason = "rate-limited: too slow to read; reconnect"

// slowGrace is how long the NOTICE gets before the close frame follows.
const slowGrace = time.Second

type outbox struct {
	mu     sync.Mutex
	cond   sync.Cond
	frames [][]byte
	bytes  int
	limit  int
	closed bool // the connection ended: nothing more is written
	failed bool // overflowed: only the last NOTICE is written
}

func newOutbox(limit int) *outbox {
	o := &outbox{limit: limit}
	o.cond.L = &o.mu
	return o
}

// offer queues a live frame without waiting. It reports false when the
// frame does not fit: the caller closes the client.
func (o *outbox) offer(b []byte) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || o.failed {
		return true
	}
	if o.bytes > 0 && o.bytes+len(b) > o.limit {
		return false
	}
	o.push(b)
	return true
}

// put queues a frame answering the client's own request, waiting while
// the queue is more than half full. It reports false once the connection
// is closing.
func (o *outbox) put(b []byte) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for !o.closed && !o.failed && o.bytes > 0 && o.bytes+len(b) > o.limit/2 {
		o.cond.Wait()
	}
	if o.closed || o.failed {
		return false
	}
	o.push(b)
	return true
}

func (o *outbox) push(b []byte) {
	o.frames = append(o.frames, b)
	o.bytes += len(b)
	o.cond.Broadcast()
}

// fail drops the backlog for one last frame, and reports whether this
// call was the one that failed the outbox.
func (o *outbox) fail(last []byte) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.failed || o.closed {
		return false
	}
	o.failed = true
	o.frames, o.bytes = [][]byte{last}, len(last)
	o.cond.Broadcast()
	return true
}

// next waits for the next frame; false when there will be none.
func (o *outbox) next() ([]byte, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for len(o.frames) == 0 && !o.closed && !o.failed {
		o.cond.Wait()
	}
	if o.closed || len(o.frames) == 0 {
		return nil, false
	}
	b := o.frames[0]
	o.frames[0] = nil
	o.frames = o.frames[1:]
	o.bytes -= len(b)
	o.cond.Broadcast() // room for put
	return b, true
}

// close ends the outbox; waiting senders and the writer return.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.frames, o.bytes = nil, 0
	o.cond.Broadcast()
	o.mu.Unlock()
}

// writer drains the outbox onto the socket until the connection ends or
// a write fails (the per-frame deadline included).
func (c *client) writer() {
	defer close(c.wdone)
	for {
		b, ok := c.out.next()
		if !ok {
			return
		}
		c.conn.SetWriteDeadline(time.Now().Add(writeWait))
		if err := c.conn.WriteMessage(websocket.TextMessage, b); err != nil {
			c.cancel()
			return
		}
	}
}

// send queues a frame answering the client's own request.
func (c *client) send(v any) {
	if b, err := json.Marshal(v); err == nil {
		c.out.put(b)
	}
}

// tooSlow closes a client whose queue overflowed: a NOTICE if the writer
// gets it out within slowGrace, then a close frame with the reason. It
// runs on its own goroutine; the publisher that overflowed it moves on.
func (c *client) tooSlow() {
	notice, _ := json.Marshal(nostr.NoticeEnvelope(tooSlowReason))
	if !c.out.fail(notice) {
		return
	}
	c.r.log.Info("closing a websocket too slow to read its subscriptions", "ip", c.ip)
	go func() {
		t := time.NewTimer(slowGrace)
		defer t.Stop()
		select {
		case <-c.wdone:
		case <-t.C:
		case <-c.ctx.Done():
		}
		msg := websocket.FormatCloseMessage(websocket.CloseTryAgainLater, tooSlowReason)
		c.conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
		c.cancel()
	}()
}
