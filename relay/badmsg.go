package relay

import (
	"encoding/json"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// refuseUnparsed answers a message the envelope parser refused. NIP-01
// lets a client tell which request failed only by its subscription id or
// event id, so whenever the message still names one (a REQ or COUNT with
// a bad filter, an EVENT with a bad field) the refusal goes there: CLOSED
// or OK false with invalid:. Only a message naming nothing gets a NOTICE;
// an AUTH that does not parse names no event, and its NOTICE says what
// an AUTH carries.
func (c *client) refuseUnparsed(msg []byte, err error) {
	why := "invalid: could not parse message: " + errString(err, "unknown message type")
	var parts []json.RawMessage
	var label string
	if json.Unmarshal(msg, &parts) == nil && len(parts) >= 1 {
		json.Unmarshal(parts[0], &label)
	}
	if label == "AUTH" {
		c.send(nostr.NoticeEnvelope(errAuthNeedsEvent))
		return
	}
	if len(parts) >= 2 {
		switch label {
		case "REQ", "COUNT":
			var id string
			if json.Unmarshal(parts[1], &id) == nil && id != "" {
				c.send(nostr.ClosedEnvelope{SubscriptionID: id, Reason: "invalid: could not parse the filter: " + errString(err, "bad filter")})
				return
			}
		case "EVENT":
			var evt struct {
				ID string `json:"id"`
			}
			if json.Unmarshal(parts[1], &evt) == nil && nostr.IsValid32ByteHex(evt.ID) {
				refusal := snowclaw.Invalid("could not parse the event: %s", errString(err, "bad event"))
				c.r.met.refused(refusal)
				c.ok(evt.ID, refusal)
				return
			}
		}
	}
	c.send(nostr.NoticeEnvelope(why))
}
