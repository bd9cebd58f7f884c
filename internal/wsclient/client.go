// Package wsclient is a small, race-free Nostr websocket client for the
// CLI and the end-to-end tests. It speaks NIP-01/42/45 with go-nostr's
// types over a bare websocket and records every frame, so a test sees
// exactly what the relay sent (go-nostr's own Relay client filters events
// it did not ask for and has data races on auth and close).
package wsclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"
)

// Client is one websocket connection to a relay.
type Client struct {
	URL  string
	conn *websocket.Conn
	wmu  sync.Mutex
	mu   sync.Mutex
	msgs []json.RawMessage
	got  chan struct{} // closed (and replaced, under mu) when a frame arrives: wakes every waiter at once
	done chan struct{}
	seq  atomic.Int64
}

// Dial connects to url.
func Dial(url string) (*Client, error) { return DialHeader(url, nil) }

// HandshakeError is a refused upgrade: the relay answered HTTP Status.
type HandshakeError struct{ Status int }

func (e *HandshakeError) Error() string {
	return fmt.Sprintf("websocket handshake refused: HTTP %d", e.Status)
}

// DialHeader connects to url sending extra request headers (a Host or
// X-Forwarded-* a test forges). A refused upgrade is a *HandshakeError.
func DialHeader(url string, h http.Header) (*Client, error) {
	conn, resp, err := websocket.DefaultDialer.Dial(url, h)
	if err != nil {
		if resp != nil {
			resp.Body.Close()
			return nil, &HandshakeError{Status: resp.StatusCode}
		}
		return nil, err
	}
	c := &Client{URL: url, conn: conn, got: make(chan struct{}), done: make(chan struct{})}
	go c.readLoop()
	return c, nil
}

func (c *Client) readLoop() {
	defer close(c.done)
	for {
		_, b, err := c.conn.ReadMessage()
		if err != nil {
			return
		}
		c.mu.Lock()
		c.msgs = append(c.msgs, b)
		close(c.got)
		c.got = make(chan struct{})
		c.mu.Unlock()
	}
}

// Done is closed when the relay ends the connection.
func (c *Client) Done() <-chan struct{} { return c.done }

// Close ends the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Send writes one message, e.g. Send("REQ", "sub", filter).
func (c *Client) Send(v ...any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.conn.WriteJSON(v)
}

// SendRaw writes one text frame exactly as given: malformed or
// hand-built messages a marshaller would not produce.
func (c *Client) SendRaw(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.conn.WriteMessage(websocket.TextMessage, b)
}

// Frames returns every message received so far.
func (c *Client) Frames() []json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]json.RawMessage(nil), c.msgs...)
}

// All returns every frame received so far, one per line, for failure
// messages.
func (c *Client) All() string {
	var b strings.Builder
	for _, m := range c.Frames() {
		b.Write(m)
		b.WriteByte('\n')
	}
	return b.String()
}

// WaitFor returns the first frame labelled label whose second element is
// id (any id when id is ""), waiting up to timeout.
func (c *Client) WaitFor(label, id string, timeout time.Duration) ([]json.RawMessage, bool) {
	return c.waitFrom(0, label, id, timeout)
}

// WaitAny returns the first frame about id (any id when id is "") that
// carries one of labels, waiting up to timeout: an EOSE or a CLOSED, for
// one, without waiting out the one that never comes.
func (c *Client) WaitAny(id string, timeout time.Duration, labels ...string) ([]json.RawMessage, bool) {
	return c.waitAny(0, id, timeout, labels...)
}

// mark is the number of frames received so far; waitFrom(mark, …) ignores
// older frames, such as the OK of an earlier publish of the same event.
func (c *Client) mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.msgs)
}

func (c *Client) waitFrom(from int, label, id string, timeout time.Duration) ([]json.RawMessage, bool) {
	return c.waitAny(from, id, timeout, label)
}

// Events returns the events received for subscription sub, in order.
func (c *Client) Events(sub string) []*nostr.Event { return c.eventsFrom(0, sub) }

// EventIDs is Events as a set of ids.
func (c *Client) EventIDs(sub string) map[string]bool {
	out := make(map[string]bool)
	for _, e := range c.Events(sub) {
		out[e.ID] = true
	}
	return out
}

// Auth answers the relay's NIP-42 challenge, signing with sk.
func (c *Client) Auth(sk string) error {
	challenge, err := c.Challenge(sk, 3*time.Second)
	if err != nil {
		return err
	}
	evt := nostr.Event{Kind: nostr.KindClientAuthentication, CreatedAt: nostr.Now(),
		Tags: nostr.Tags{{"relay", c.URL}, {"challenge", challenge}}}
	if err := evt.Sign(sk); err != nil {
		return err
	}
	return c.Publish(context.Background(), evt, "AUTH")
}

// Challenge is the relay's NIP-42 challenge on this connection, for the
// key sk. A relay may send it at any moment (NIP-42); this one sends it
// when something needs it, not on connect (relay/conn.go), so when none
// has arrived Challenge asks for one at once, the standard way: a read
// only an authenticated reader is served, the gift wraps for sk's key
// (NIP-17), which the relay refuses auth-required after sending its
// challenge. limit 0: nothing is read either way.
func (c *Client) Challenge(sk string, timeout time.Duration) (string, error) {
	if arr, ok := c.WaitFor("AUTH", "", 0); ok {
		return challengeOf(arr), nil
	}
	pk, err := nostr.GetPublicKey(sk)
	if err != nil {
		return "", err
	}
	id := c.nextID("auth")
	if err := c.Send("REQ", id, nostr.Filter{Kinds: []int{nostr.KindGiftWrap}, Tags: nostr.TagMap{"p": {pk}}, LimitZero: true}); err != nil {
		return "", err
	}
	arr, ok := c.WaitFor("AUTH", "", timeout)
	c.Send("CLOSE", id) // when the relay served it (no auth needed there)
	if !ok {
		return "", errors.New("no AUTH challenge from relay")
	}
	return challengeOf(arr), nil
}

func challengeOf(arr []json.RawMessage) string {
	var challenge string
	json.Unmarshal(arr[1], &challenge)
	return challenge
}

// Publish sends an event (or, with label "AUTH", an auth event) and waits
// for its OK. A refusal is an error "msg: <reason>".
func (c *Client) Publish(ctx context.Context, evt nostr.Event, label ...string) error {
	l := "EVENT"
	if len(label) > 0 {
		l = label[0]
	}
	from := c.mark()
	if err := c.Send(l, evt); err != nil {
		return err
	}
	timeout := 5 * time.Second
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	arr, ok := c.waitFrom(from, "OK", evt.ID, timeout)
	if !ok {
		return fmt.Errorf("no OK for %s", evt.ID)
	}
	var accepted bool
	var reason string
	json.Unmarshal(arr[2], &accepted)
	if len(arr) > 3 {
		json.Unmarshal(arr[3], &reason)
	}
	if !accepted {
		return &Refused{Reason: reason}
	}
	return nil
}

// Refused is an OK false: Reason is the relay's text, its NIP-01 prefix
// first.
type Refused struct{ Reason string }

func (e *Refused) Error() string { return "msg: " + e.Reason }

func (c *Client) nextID(prefix string) string {
	return prefix + strconv.FormatInt(c.seq.Add(1), 10)
}

// Fetch runs one REQ to EOSE and returns the events, or the CLOSED reason.
func (c *Client) Fetch(f nostr.Filter, timeout time.Duration) ([]*nostr.Event, string, error) {
	id := c.nextID("q")
	from := c.mark()
	if err := c.Send("REQ", id, f); err != nil {
		return nil, "", err
	}
	arr, ok := c.waitAny(from, id, timeout, "EOSE", "CLOSED")
	if !ok {
		return nil, "", fmt.Errorf("REQ %v: neither EOSE nor CLOSED within %s", f, timeout)
	}
	events := c.eventsFrom(from, id)
	var label, reason string
	json.Unmarshal(arr[0], &label)
	if label == "CLOSED" {
		json.Unmarshal(arr[2], &reason)
		return events, reason, nil
	}
	c.Send("CLOSE", id)
	return events, "", nil
}

// Count sends a NIP-45 COUNT and returns the count, or the CLOSED reason.
func (c *Client) Count(f nostr.Filter, timeout time.Duration) (int64, string, error) {
	id := c.nextID("c")
	from := c.mark()
	if err := c.Send("COUNT", id, f); err != nil {
		return 0, "", err
	}
	arr, ok := c.waitAny(from, id, timeout, "COUNT", "CLOSED")
	if !ok {
		return 0, "", fmt.Errorf("COUNT %v: no answer within %s", f, timeout)
	}
	var label string
	json.Unmarshal(arr[0], &label)
	if label == "CLOSED" {
		var reason string
		json.Unmarshal(arr[2], &reason)
		return 0, reason, nil
	}
	var body struct {
		Count int64 `json:"count"`
	}
	json.Unmarshal(arr[2], &body)
	return body.Count, "", nil
}

// Notices returns the text of every NOTICE received so far.
func (c *Client) Notices() []string {
	var out []string
	for _, m := range c.Frames() {
		var arr []json.RawMessage
		if json.Unmarshal(m, &arr) != nil || len(arr) < 2 {
			continue
		}
		var l, text string
		json.Unmarshal(arr[0], &l)
		if l == "NOTICE" && json.Unmarshal(arr[1], &text) == nil {
			out = append(out, text)
		}
	}
	return out
}

// waitAny returns the first frame after mark from that is about id (any
// id when id is "") and carries one of labels, waiting up to timeout.
func (c *Client) waitAny(from int, id string, timeout time.Duration, labels ...string) ([]json.RawMessage, bool) {
	deadline := time.After(timeout)
	closed := false
	for {
		c.mu.Lock()
		tail := c.msgs[min(from, len(c.msgs)):]
		from = len(c.msgs)
		got := c.got
		c.mu.Unlock()
		for _, m := range tail {
			var arr []json.RawMessage
			if json.Unmarshal(m, &arr) != nil || len(arr) < 2 {
				continue
			}
			var l, i string
			json.Unmarshal(arr[0], &l)
			json.Unmarshal(arr[1], &i)
			if id != "" && i != id {
				continue
			}
			for _, want := range labels {
				if l == want {
					return arr, true
				}
			}
		}
		if closed {
			return nil, false
		}
		select {
		case <-got:
		case <-c.done:
			closed = true
		case <-deadline:
			return nil, false
		}
	}
}

// eventsFrom is Events for frames received after mark from.
func (c *Client) eventsFrom(from int, sub string) []*nostr.Event {
	c.mu.Lock()
	tail := append([]json.RawMessage(nil), c.msgs[min(from, len(c.msgs)):]...)
	c.mu.Unlock()
	var out []*nostr.Event
	for _, m := range tail {
		var arr []json.RawMessage
		if json.Unmarshal(m, &arr) != nil || len(arr) < 3 {
			continue
		}
		var l, id string
		json.Unmarshal(arr[0], &l)
		json.Unmarshal(arr[1], &id)
		if l != "EVENT" || id != sub {
			continue
		}
		var evt nostr.Event
		if json.Unmarshal(arr[2], &evt) == nil {
			out = append(out, &evt)
		}
	}
	return out
}
