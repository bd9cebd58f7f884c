package groups

import "github.com/snowclaw/snowclaw/relay"

// Init attaches the plugin to r (relay29-style): its moderation checks
// run among r's write rules, its state follows every stored event, and
// it publishes its metadata and deletes through r. Call it after r's own
// rules are attached, before Load and before serving.
func (s *Groups) Init(r *relay.Relay) {
	s.opts.Publish, s.opts.Delete = r.Publish, r.Delete
	s.shared = r.Shared()
	r.RejectEvent = append(r.RejectEvent, s.RejectEvent)
	r.OnEventSaved = append(r.OnEventSaved, s.OnEventSaved)
}
