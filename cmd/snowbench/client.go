package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"
)

// conn is one benchmark connection: synchronous, one request in flight,
// keeping no history (internal/wsclient records every frame, which a run
// of a million requests cannot afford).
type conn struct {
	url string
	ws  *websocket.Conn
}

// frameTimeout bounds the wait for any one answer.
const frameTimeout = 2 * time.Minute

// dial connects without authenticating (an anonymous reader).
func dial(url string) (*conn, error) {
	ws, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		return nil, err
	}
	return &conn{url: url, ws: ws}, nil
}

// dialAuth connects and authenticates with sk (NIP-42): it asks for the
// relay's AUTH challenge, signs it and waits for the OK. snowclaw sends
// its challenge when something needs it, not on connect (relay/conn.go),
// so the ask is a read that does, sk's gift wraps, limit 0, answered at
// once; the bare khatru relay sends one on connect anyway (bare.go).
func dialAuth(url, sk string) (*conn, error) {
	ws, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		return nil, err
	}
	c := &conn{url: url, ws: ws}
	pk, err := nostr.GetPublicKey(sk)
	if err != nil {
		c.close()
		return nil, err
	}
	ask := nostr.Filter{Kinds: []int{nostr.KindGiftWrap}, Tags: nostr.TagMap{"p": {pk}}, LimitZero: true}
	if err := c.ws.WriteJSON([]any{"REQ", "auth", ask}); err != nil {
		c.close()
		return nil, err
	}
	challenge := ""
	for challenge == "" {
		label, f, err := c.read()
		if err != nil {
			c.close()
			return nil, fmt.Errorf("waiting for the AUTH challenge: %w", err)
		}
		if label == "AUTH" && len(f) > 1 {
			_ = json.Unmarshal(f[1], &challenge)
		}
	}
	auth := nostr.Event{Kind: nostr.KindClientAuthentication, CreatedAt: nostr.Now(),
		Tags: nostr.Tags{{"relay", url}, {"challenge", challenge}}}
	if err := auth.Sign(sk); err != nil {
		c.close()
		return nil, err
	}
	if err := c.send("AUTH", auth, auth.ID); err != nil {
		c.close()
		return nil, fmt.Errorf("AUTH: %w", err)
	}
	return c, nil
}

func (c *conn) close() { _ = c.ws.Close() }

// read returns the next frame's label and elements.
func (c *conn) read() (string, []json.RawMessage, error) {
	_ = c.ws.SetReadDeadline(time.Now().Add(frameTimeout))
	_, msg, err := c.ws.ReadMessage()
	if err != nil {
		return "", nil, err
	}
	var f []json.RawMessage
	if err := json.Unmarshal(msg, &f); err != nil || len(f) == 0 {
		return "", nil, fmt.Errorf("unreadable frame %.200s", msg)
	}
	var label string
	_ = json.Unmarshal(f[0], &label)
	return label, f, nil
}

// send writes [label, evt] and waits for the OK naming id; a refusal is an
// error carrying the relay's reason.
func (c *conn) send(label string, evt nostr.Event, id string) error {
	if err := c.ws.WriteJSON([]any{label, evt}); err != nil {
		return err
	}
	for {
		l, f, err := c.read()
		if err != nil {
			return err
		}
		if l != "OK" || len(f) < 3 {
			continue
		}
		var got string
		var ok bool
		_ = json.Unmarshal(f[1], &got)
		if got != id {
			continue
		}
		if err := json.Unmarshal(f[2], &ok); err != nil {
			return err
		}
		if !ok {
			var reason string
			if len(f) > 3 {
				_ = json.Unmarshal(f[3], &reason)
			}
			return fmt.Errorf("refused: %s", reason)
		}
		return nil
	}
}

// publish sends one event and waits for its OK.
func (c *conn) publish(evt nostr.Event) error { return c.send("EVENT", evt, evt.ID) }

// errClosed is a REQ the relay ended with CLOSED.
var errClosed = errors.New("CLOSED")

// query sends a REQ and returns the ids of its events up to EOSE.
func (c *conn) query(sub string, f nostr.Filter) ([]string, error) {
	if err := c.ws.WriteJSON([]any{"REQ", sub, f}); err != nil {
		return nil, err
	}
	var ids []string
	for {
		l, fr, err := c.read()
		if err != nil {
			return nil, err
		}
		if len(fr) < 2 {
			continue
		}
		var s string
		_ = json.Unmarshal(fr[1], &s)
		if s != sub {
			continue
		}
		switch l {
		case "EVENT":
			var e struct {
				ID string `json:"id"`
			}
			if len(fr) > 2 && json.Unmarshal(fr[2], &e) == nil {
				ids = append(ids, e.ID)
			}
		case "EOSE":
			_ = c.ws.WriteJSON([]any{"CLOSE", sub})
			return ids, nil
		case "CLOSED":
			var reason string
			if len(fr) > 2 {
				_ = json.Unmarshal(fr[2], &reason)
			}
			return ids, fmt.Errorf("%w: %s", errClosed, reason)
		}
	}
}
