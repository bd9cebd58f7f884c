package relay

import (
	"strconv"

	"github.com/mailru/easyjson/jwriter"
	"github.com/nbd-wtf/go-nostr"
)

// The frames that carry a client's subscription id are written here, once
// and by hand, because go-nostr's EVENT and COUNT envelopes write the id
// between quotes without escaping it: an id holding a quote or a
// backslash (NIP-01 allows any string) made a frame that is not JSON,
// which encoding/json refused, so that subscription silently got no
// events. Here the id is a JSON string like any other, and the event is
// go-nostr's easyjson encoding; nothing is parsed again to be checked
// (json.Marshal compacted and re-validated every EVENT frame, a search's
// largest serialisation cost after the event itself).

// eventFrame is ["EVENT",<sub>,<event>].
func eventFrame(sub string, evt *nostr.Event) ([]byte, error) {
	w := jwriter.Writer{NoEscapeHTML: true}
	w.RawString(`["EVENT",`)
	w.String(sub)
	w.RawByte(',')
	evt.MarshalEasyJSON(&w)
	w.RawByte(']')
	return w.BuildBytes()
}

// countFrame is ["COUNT",<sub>,{"count":n}].
func countFrame(sub string, n int64) ([]byte, error) {
	w := jwriter.Writer{NoEscapeHTML: true}
	w.RawString(`["COUNT",`)
	w.String(sub)
	w.RawString(`,{"count":`)
	w.RawString(strconv.FormatInt(n, 10))
	w.RawString(`}]`)
	return w.BuildBytes()
}

// sendEvent queues an EVENT frame answering the client's own request.
func (c *client) sendEvent(sub string, evt *nostr.Event) {
	if b, err := eventFrame(sub, evt); err == nil {
		c.out.put(b)
	}
}

// deliverEvent queues a live EVENT frame; it never waits: a client whose
// queue is full is closed (tooSlow).
func (c *client) deliverEvent(sub string, evt *nostr.Event) {
	b, err := eventFrame(sub, evt)
	if err != nil {
		return
	}
	if !c.out.offer(b) {
		c.tooSlow()
	}
}
