package remotesearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"
)

// The remote client is written here rather than taken from go-nostr's
// Relay: a remote is untrusted and may be slow, so one REQ must be one
// connection with a hard deadline, a frame size cap and an event count
// cap, must never answer AUTH (the caller's identity stays here), and
// must hand back every event unverified so that this package verifies
// and counts the bad ones itself. go-nostr's Relay keeps a long-lived
// connection with its own verification and, as internal/wsclient notes,
// races on close.

// maxFrame caps one websocket frame from a remote; an event larger than
// this ends the answer.
const maxFrame = 512 << 10

// maxInfo caps a NIP-11 document.
const maxInfo = 64 << 10

// ErrRefused is a remote's CLOSED answer to the REQ.
var ErrRefused = errors.New("remote refused the request")

// fetchREQ opens one connection to url, sends one REQ with filters and
// reads events until EOSE, CLOSED, max events or ctx's end. Events are
// returned as received, unverified. A deadline reached after some
// events is an error; what arrived is returned with it.
func fetchREQ(ctx context.Context, url string, filters nostr.Filters, max int) ([]*nostr.Event, error) {
	d := websocket.Dialer{Proxy: http.ProxyFromEnvironment, ReadBufferSize: 16 << 10, WriteBufferSize: 4 << 10}
	conn, resp, err := d.DialContext(ctx, url, nil)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("connecting: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() }) // unblocks the read below
	defer stop()
	defer conn.Close()
	conn.SetReadLimit(maxFrame)
	if dl, ok := ctx.Deadline(); ok {
		conn.SetReadDeadline(dl)
		conn.SetWriteDeadline(dl)
	}
	const sub = "remote"
	req := append([]any{"REQ", sub}, anySlice(filters)...)
	if err := conn.WriteJSON(req); err != nil {
		return nil, orCtx(ctx, fmt.Errorf("sending REQ: %w", err))
	}
	var out []*nostr.Event
	for len(out) < max {
		_, b, err := conn.ReadMessage()
		if err != nil {
			return out, orCtx(ctx, fmt.Errorf("reading: %w", err))
		}
		var frame []json.RawMessage
		if json.Unmarshal(b, &frame) != nil || len(frame) < 2 {
			continue
		}
		var label, id string
		json.Unmarshal(frame[0], &label)
		json.Unmarshal(frame[1], &id)
		switch {
		case label == "EVENT" && id == sub && len(frame) >= 3:
			var evt nostr.Event
			if json.Unmarshal(frame[2], &evt) == nil {
				out = append(out, &evt)
			}
		case label == "EOSE" && id == sub:
			conn.WriteJSON([]any{"CLOSE", sub})
			return out, nil
		case label == "CLOSED" && id == sub:
			var msg string
			if len(frame) >= 3 {
				json.Unmarshal(frame[2], &msg)
			}
			return out, fmt.Errorf("%w: %s", ErrRefused, msg)
		}
		// AUTH challenges and NOTICEs are not answered: a remote search
		// never says who asks
	}
	conn.WriteJSON([]any{"CLOSE", sub})
	return out, nil
}

// orCtx prefers ctx's error, so a deadline reads as a timeout and not as
// the closed connection it caused.
func orCtx(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func anySlice(fs nostr.Filters) []any {
	out := make([]any, len(fs))
	for i, f := range fs {
		out[i] = f
	}
	return out
}

// errNIP11 marks a failure to fetch a remote's NIP-11 document (no
// answer at all; a missing document is no failure).
var errNIP11 = errors.New("NIP-11")

// fetchNIPs reads the remote's NIP-11 document and returns its
// supported_nips. A relay that serves no usable document supports none;
// missing then says why (for the log), and err is nil.
func fetchNIPs(ctx context.Context, client *http.Client, wsURL string) (nips map[int]bool, missing string, err error) {
	u := "http" + strings.TrimPrefix(wsURL, "ws")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", errNIP11, err)
	}
	req.Header.Set("Accept", "application/nostr+json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", errNIP11, orCtx(ctx, err))
	}
	defer resp.Body.Close()
	nips = map[int]bool{}
	if resp.StatusCode != http.StatusOK {
		return nips, "HTTP " + resp.Status, nil
	}
	var doc struct {
		SupportedNIPs []any `json:"supported_nips"`
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxInfo))
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", errNIP11, orCtx(ctx, err))
	}
	if json.Unmarshal(b, &doc) != nil {
		return nips, "not a JSON document", nil
	}
	for _, n := range doc.SupportedNIPs {
		switch v := n.(type) {
		case float64:
			nips[int(v)] = true
		case string: // some relays list "50"
			var i int
			if _, err := fmt.Sscan(v, &i); err == nil {
				nips[i] = true
			}
		}
	}
	return nips, "", nil
}
