package relay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip70"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/policies"
)

const (
	writeWait  = 10 * time.Second
	pongWait   = 60 * time.Second
	pingPeriod = 30 * time.Second
)

// client is one websocket connection speaking NIP-01.
type client struct {
	r         *Relay
	conn      *websocket.Conn
	out       *outbox       // frames for writer, the socket's only data writer
	wdone     chan struct{} // closed when writer returns
	ip        string
	challenge string
	self      selfOrigin // the relay's name NIP-42 auth events must carry

	amu    sync.RWMutex
	authed string

	ctx    context.Context
	cancel context.CancelFunc
	info   *policies.Conn
}

var upgrader = websocket.Upgrader{
	ReadBufferSize:  4096,
	WriteBufferSize: 4096,
	CheckOrigin:     func(*http.Request) bool { return true },
}

func (c *client) reader() string {
	c.amu.RLock()
	defer c.amu.RUnlock()
	return c.authed
}

// closed ends subscription id with the refusal err (see refusing).
func (c *client) closed(id string, err error) {
	c.refusing("CLOSED", id, err)
	c.send(nostr.ClosedEnvelope{SubscriptionID: id, Reason: snowclaw.Text(err)})
}

// ok answers an EVENT or AUTH: accepted when err is nil, else refused
// with it (see refusing). An OK names the event it answers (NIP-01) by
// the id the client sent, right or wrong; a message that carries no id
// is answered with a NOTICE instead, since an OK with an empty id
// answers nothing a client sent.
func (c *client) ok(id string, err error) {
	if id == "" {
		c.refusing("NOTICE", id, err)
		why := "invalid: the message carries no event id"
		if err != nil {
			why = snowclaw.Text(err) + " (the message carries no event id for an OK to name)"
		}
		c.send(nostr.NoticeEnvelope(why))
		return
	}
	if err == nil || errors.Is(err, errAlreadyStored) {
		c.send(nostr.OKEnvelope{EventID: id, OK: true, Reason: errString(err, "")})
		return
	}
	c.refusing("OK", id, err)
	c.send(nostr.OKEnvelope{EventID: id, OK: false, Reason: snowclaw.Text(err)})
}

// refusing is what goes with a refusal, before it is sent. An
// auth-required one is preceded by the connection's AUTH challenge,
// which the relay sends when something needs it (serveWS): NIP-42
// has the challenge sent "immediately before" such a refusal, so that
// the client holds one when it acts on the refusal (nostr-tools signs
// the challenge it holds when a CLOSED says auth-required). A store
// failure is logged here with all its words, once, where a client is
// answered: the client reads only snowclaw.Text's one sentence.
func (c *client) refusing(answer, id string, err error) {
	switch {
	case err == nil:
	case snowclaw.ReasonOf(err) == snowclaw.ReasonAuthRequired:
		c.sendChallenge()
	case isStoreFailure(err) && c.ctx.Err() == nil:
		c.r.log.Error("the event store failed; the client is told to try again", "answer", answer, "id", id, "ip", c.ip, "err", err)
	}
}

func isStoreFailure(err error) bool {
	_, ok := errors.AsType[*snowclaw.StoreError](err)
	return ok
}

func (c *client) sendChallenge() {
	c.send(nostr.AuthEnvelope{Challenge: &c.challenge})
}

// serveWS upgrades and runs one client connection until it ends.
func (r *Relay) serveWS(w http.ResponseWriter, req *http.Request) {
	ip := r.remoteIP(req)
	if r.connLimit(ip) {
		http.Error(w, "rate-limited: too many new connections from your address", http.StatusTooManyRequests)
		return
	}
	conn, err := upgrader.Upgrade(w, req, nil)
	if err != nil {
		r.log.Debug("websocket upgrade failed", "ip", ip, "err", err)
		return
	}
	ch := make([]byte, 16)
	rand.Read(ch)
	ctx, cancel := context.WithCancel(context.Background())
	c := &client{r: r, conn: conn, ip: ip, challenge: hex.EncodeToString(ch), self: r.origin(req), ctx: ctx, cancel: cancel,
		out: newOutbox(r.opts.HTTP.withDefaults().SendQueueBytes), wdone: make(chan struct{})}
	c.info = &policies.Conn{IP: ip, Reader: c.reader}
	c.ctx = policies.WithConn(ctx, c.info)
	r.subs.add(c)
	defer func() {
		r.subs.remove(c)
		cancel()
		c.out.close()
		conn.Close()
	}()
	go c.writer()
	go c.pinger()
	// The NIP-42 challenge is not sent on connect but when it is needed
	// (NIP-42: "at any moment"): right before the first auth-required
	// refusal (refusing), or to a client that has said nothing for
	// QuietChallenge, which is waiting for it to authenticate (nostr-tools'
	// onauth, NDK's auth policies, welshman's attemptAuth, the web UI).
	// A challenge on connect stalled clients that hold every EOSE back
	// while one is unanswered (welshman's default socket policies do,
	// for as long as no auth policy of theirs answers it): an anonymous
	// reader of a public group never got to the end of a read. A client
	// that asks at once is answered, and challenged only if its asks need
	// it; one that wants to authenticate first can also ask for the
	// challenge with a read that needs it (internal/wsclient Auth: its
	// own gift wraps).
	quiet := time.AfterFunc(r.opts.HTTP.withDefaults().QuietChallenge, c.sendChallenge)
	defer quiet.Stop()
	c.readLoop(quiet)
}

// pinger keeps the connection alive and, however the connection ends
// (cancelled by the writer, the reader, tooSlow or a failed ping), tears
// it down: the outbox closes, which ends the writer and any sender waiting
// for room, and the socket closes, which ends the reader.
func (c *client) pinger() {
	t := time.NewTicker(pingPeriod)
	defer func() {
		t.Stop()
		c.out.close()
		c.conn.Close()
	}()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
			// WriteControl may run beside the writer's data frames
			err := c.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeWait))
			if err != nil {
				c.cancel()
				return
			}
		}
	}
}

// readLoop reads the client's messages until the connection ends; the
// first one stops quiet, the challenge for a client that says nothing.
func (c *client) readLoop(quiet *time.Timer) {
	c.conn.SetReadLimit(c.r.maxMessage)
	c.conn.SetReadDeadline(time.Now().Add(pongWait))
	c.conn.SetPongHandler(func(string) error {
		return c.conn.SetReadDeadline(time.Now().Add(pongWait))
	})
	parser := nostr.NewMessageParser()
	for {
		_, msg, err := c.conn.ReadMessage()
		if err != nil {
			if websocket.IsCloseError(err, websocket.CloseMessageTooBig) || errors.Is(err, websocket.ErrReadLimit) {
				c.r.log.Debug("client sent an oversized message", "ip", c.ip)
			}
			return
		}
		c.conn.SetReadDeadline(time.Now().Add(pongWait))
		quiet.Stop()
		env, err := parser.ParseMessage(string(msg))
		if err != nil || env == nil {
			c.refuseUnparsed(msg, err)
			continue
		}
		c.handle(env)
		if c.ctx.Err() != nil {
			return
		}
	}
}

// errString is err's text, or none when err is nil.
func errString(err error, none string) string {
	if err == nil {
		return none
	}
	return err.Error()
}

func (c *client) handle(env nostr.Envelope) {
	switch env := env.(type) {
	case *nostr.EventEnvelope:
		c.handleEvent(&env.Event)
	case *nostr.ReqEnvelope:
		c.handleReq(env.SubscriptionID, env.Filters)
	case *nostr.CountEnvelope:
		c.handleCount(env.SubscriptionID, nostr.Filters{env.Filter})
	case *nostr.CloseEnvelope:
		c.r.subs.unsubscribe(c, string(*env))
	case *nostr.AuthEnvelope:
		c.handleAuth(env)
	default:
		c.send(nostr.NoticeEnvelope("invalid: clients may send EVENT, REQ, COUNT, CLOSE and AUTH"))
	}
}

func (c *client) handleEvent(evt *nostr.Event) {
	if err := c.checkEvent(evt); err != nil {
		c.r.met.refused(err)
		c.ok(evt.ID, err)
		return
	}
	c.ok(evt.ID, c.r.add(c.ctx, snowclaw.ReadEvent(evt)))
}

// sigKeyCache is how many authors' keys the signature check keeps lifted
// (about 130 bytes each): more than the publishers a relay hears at once.
const sigKeyCache = 4096

// checkEvent is what the websocket checks before the write pipeline: the
// id, the signature, and NIP-70's author-only rule, which needs this
// connection's authentication.
func (c *client) checkEvent(evt *nostr.Event) error {
	if err := c.r.sigs.Check(evt); err != nil {
		return snowclaw.Invalid("%v", err)
	}
	if nip70.IsProtected(*evt) {
		switch c.reader() {
		case "":
			return snowclaw.AuthRequired("this event is protected (NIP-70); authenticate as its author")
		case evt.PubKey:
		default:
			return snowclaw.Restricted("a protected event (NIP-70) is accepted from its author only")
		}
	}
	return nil
}

func (c *client) handleReq(id string, raw nostr.Filters) {
	if err := c.r.caughtUp(c.ctx); err != nil {
		c.closed(id, err)
		return
	}
	filters, err := c.checkFilters(id, raw)
	if err != nil {
		c.closed(id, err)
		return
	}
	// a REQ reusing an open id replaces that subscription (NIP-01), so
	// it does not count against the limit
	if max := c.r.opts.Limits.MaxSubscriptions; !c.r.subs.has(c, id) && c.r.subs.count(c) >= max {
		c.closed(id, snowclaw.Blocked("at most %d open subscriptions per connection; close some first", max))
		return
	}
	// listen first, then read the store: an event stored in between is
	// sent twice rather than never
	c.r.subs.subscribe(c, id, filters)
	go func() {
		for _, f := range filters {
			if f.LimitZero {
				continue
			}
			if f.Search != nil {
				evs, explain, err := c.r.Search(c.ctx, c.reader(), f)
				if err != nil {
					c.closed(id, err)
					c.r.subs.unsubscribe(c, id)
					return
				}
				for _, evt := range evs {
					c.sendEvent(id, evt)
				}
				if explain != nil {
					c.sendExplain(id, explain)
				}
				continue
			}
			// a store that fails part way ends the REQ with CLOSED, not
			// EOSE: what was sent is not all there is
			if err := c.r.queryVisible(c.ctx, f.Filter, func(evt *nostr.Event) { c.sendEvent(id, evt) }); err != nil {
				if c.ctx.Err() == nil {
					c.closed(id, err)
				}
				c.r.subs.unsubscribe(c, id)
				return
			}
		}
		eose := nostr.EOSEEnvelope(id)
		c.send(eose)
	}()
}

// checkFilters reads the filters of a REQ or COUNT, each search string
// parsed here and nowhere else, and returns them, or the CLOSED refusal
// when one may not run.
func (c *client) checkFilters(id string, raw nostr.Filters) ([]snowclaw.Filter, error) {
	l := c.r.opts.Limits
	if id == "" || len(id) > l.MaxSubIDLength {
		return nil, snowclaw.Invalid("subscription ids are 1-%d characters", l.MaxSubIDLength)
	}
	if len(raw) == 0 || len(raw) > l.MaxFilters {
		return nil, snowclaw.Invalid("a request carries 1-%d filters", l.MaxFilters)
	}
	filters := make([]snowclaw.Filter, len(raw))
	for i, rf := range raw {
		f, err := snowclaw.ReadFilter(rf)
		if err != nil {
			return nil, err
		}
		for _, reject := range c.r.RejectFilter {
			if err := reject(c.ctx, f); err != nil {
				return nil, err
			}
		}
		filters[i] = f
	}
	return filters, nil
}

// sendExplain delivers the score breakdown of a search with explain:true
// as one NOTICE before EOSE: {"explain":"<sub id>","results":[…]}. Other
// clients ignore notices; it only ever covers events just sent.
func (c *client) sendExplain(sub string, rows []snowclaw.ExplainRow) {
	b, err := json.Marshal(struct {
		Explain string                `json:"explain"`
		Results []snowclaw.ExplainRow `json:"results"`
	}{sub, rows})
	if err == nil {
		c.send(nostr.NoticeEnvelope(string(b)))
	}
}

func (c *client) handleCount(id string, raw nostr.Filters) {
	if err := c.r.caughtUp(c.ctx); err != nil {
		c.closed(id, err)
		return
	}
	filters, err := c.checkFilters(id, raw)
	if err != nil {
		c.closed(id, err)
		return
	}
	go func() {
		var total int64
		for _, f := range filters {
			n, err := c.r.countVisible(c.ctx, f)
			if err != nil {
				// a search's refusal is the searcher's, as for a REQ
				// ("loading, try again"); a store's is a StoreFailed
				c.closed(id, err)
				return
			}
			total += n
		}
		if b, err := countFrame(id, total); err == nil {
			c.out.put(b)
		}
	}()
}

func (c *client) handleAuth(env *nostr.AuthEnvelope) {
	evt := &env.Event
	if env.Challenge != nil || evt.ID == "" {
		// ["AUTH","<challenge>"] is the relay's message, and an event
		// without an id cannot be answered with an OK (ok)
		c.send(nostr.NoticeEnvelope(errAuthNeedsEvent))
		return
	}
	pk, err := c.checkAuth(evt, time.Now())
	if err != nil {
		c.ok(evt.ID, err)
		return
	}
	c.amu.Lock()
	c.authed = pk
	c.amu.Unlock()
	c.ok(evt.ID, nil)
}
