package memsearch

import (
	"github.com/nbd-wtf/go-nostr"

	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/search"
)

// RemoteDoc reads an event another relay sent (plugins/remotesearch) as a
// search document, the way docOf reads a stored memory, for ranking in RAM
// only. Only a public memory item qualifies: remote results are another
// relay's public data, so a group event (h tag), an encrypted or private
// memory, or anything that is not a snow:memory item is refused, and
// nothing is ever decrypted. The text is sanitized like a stored memory's
// (no secret key reaches a prompt through a remote result either).
func RemoteDoc(evt *nostr.Event) (search.Doc, bool) {
	e := snowclaw.ReadEvent(evt)
	topic := e.Subject
	if evt.Kind != snowclaw.KindAppData || e.Namespace != snowclaw.NamespaceMemoryItem ||
		e.Group != "" || e.Encrypted || e.Tier != snowclaw.TierPublic {
		return search.Doc{}, false
	}
	doc := search.Doc{
		ID: evt.ID, Kind: evt.Kind, Pubkey: evt.PubKey, CreatedAt: int64(evt.CreatedAt),
		Tags: tagMap(evt), Tier: string(snowclaw.TierPublic), Source: evt.PubKey,
		D: e.D, Topic: topic, Volatile: true, Scope: "remote",
	}
	doc.Text = remoteKeys.Sanitize(memoryText(evt.Content, topic, snowclaw.TagValues(evt, "t"))).Text
	provenance(evt, &doc)
	return doc, doc.Text != ""
}

// remoteKeys redacts secret keys from remote text; it knows no public
// keys, so a 64-hex word is redacted as a possible secret.
var remoteKeys = policies.NewKeyFilter()
