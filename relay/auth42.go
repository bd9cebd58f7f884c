package relay

import (
	"net/url"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// authWindow is how far a NIP-42 AUTH event's created_at may be from now
// (go-nostr's validator allowed the same).
const authWindow = 10 * time.Minute

// errAuthNeedsEvent answers an AUTH from a client that carries no event to
// answer with an OK: nothing after the label, a string (the form of the
// relay's own AUTH), or an object without an id. A NOTICE, since an OK
// names an event (conn.go ok).
const errAuthNeedsEvent = `invalid: a client's AUTH message carries a signed kind 22242 event, ["AUTH", {"id": …, "kind": 22242, "tags": [["relay", …], ["challenge", …]], …}] (NIP-42); ["AUTH", "<challenge>"] is the relay's message`

// authRefused is a refused AUTH event; its text is the OK reason.
func authRefused(format string, a ...any) error { return snowclaw.Invalid(format, a...) }

// checkAuth validates a NIP-42 AUTH event in full, cheapest checks first,
// and returns its signer. go-nostr's nip42.ValidateAuthEvent is not used:
// it panics on an event without a relay tag, names no reason, and never
// checks the id.
func (c *client) checkAuth(evt *nostr.Event, now time.Time) (string, error) {
	if evt.Kind != nostr.KindClientAuthentication {
		return "", authRefused("an AUTH event is kind %d, not %d", nostr.KindClientAuthentication, evt.Kind)
	}
	challenge, err := onlyTag(evt, "challenge")
	if err != nil {
		return "", err
	}
	if challenge != c.challenge {
		return "", authRefused("the challenge tag is not this connection's challenge; sign the one in the relay's latest AUTH message")
	}
	relay, err := onlyTag(evt, "relay")
	if err != nil {
		return "", err
	}
	u, err := url.Parse(strings.TrimSpace(relay))
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" {
		return "", authRefused("the relay tag %q is not a ws:// or wss:// relay URL; sign %s", relay, c.self)
	}
	if c.self.names(u) != nil {
		return "", authRefused("the relay tag names %s, not this relay; sign %s", relay, c.self)
	}
	if d := now.Sub(evt.CreatedAt.Time()); d > authWindow || d < -authWindow {
		return "", authRefused("created_at is more than %s from the relay's clock", authWindow)
	}
	if err := c.r.sigs.Check(evt); err != nil { // the same check as an EVENT's
		return "", authRefused("%v", err)
	}
	return evt.PubKey, nil
}

// onlyTag returns the value of the one tag named key, refusing none, a
// second one, or one without a value.
func onlyTag(evt *nostr.Event, key string) (string, error) {
	var vals []string
	for _, t := range evt.Tags {
		if len(t) > 0 && t[0] == key {
			if len(t) < 2 || t[1] == "" {
				return "", authRefused("the %s tag has no value", key)
			}
			vals = append(vals, t[1])
		}
	}
	switch len(vals) {
	case 0:
		return "", authRefused("the AUTH event needs a %s tag", key)
	case 1:
		return vals[0], nil
	}
	return "", authRefused("the AUTH event carries %d %s tags; send exactly one", len(vals), key)
}
