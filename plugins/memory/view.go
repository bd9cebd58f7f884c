package memory

import (
	"strconv"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// viewer turns memory item events into what one reader sees of them
// (snowclaw.MemoryView). Whether the reader may have the event at all is
// the read rule's decision, made before; the viewer only decides whether
// the reader also gets the plaintext of an encrypted one. Decrypted text
// lives in the returned views only: it is never logged or stored.
type viewer struct {
	reader string
	owner  string
	agent  string // hex; whose a private memory is depends on it
	secret string // the agent's, hex; "": nothing is decrypted
}

// viewerFor makes a viewer for one call.
func (s *Service) viewerFor(reader string) *viewer {
	return &viewer{reader: reader, owner: s.ids.Owner, agent: s.ids.Agent, secret: s.o.AgentSecret}
}

// mayDecrypt is the plaintext rule: a private memory's text is its
// person's (snowclaw.PersonOf: the p tag of an event signed by the agent or
// that person), an internal one the owner's. The agent holds the other end
// of every such conversation, so it can decrypt for them.
func (v *viewer) mayDecrypt(evt *nostr.Event) bool {
	if v.reader == "" || v.secret == "" {
		return false
	}
	switch snowclaw.TierOf(evt) {
	case snowclaw.TierPrivate:
		person, ok := snowclaw.PersonOf(evt, v.agent)
		return ok && person == v.reader
	case snowclaw.TierInternal:
		return v.owner != "" && v.reader == v.owner
	}
	return false
}

// view decodes the markers and, when the reader may read it, the text.
func (v *viewer) view(evt *nostr.Event) snowclaw.MemoryView {
	_, topic := snowclaw.NamespaceOf(evt)
	mv := snowclaw.MemoryView{
		ID:         evt.ID,
		Pubkey:     evt.PubKey,
		Topic:      topic,
		Tier:       snowclaw.TierOf(evt),
		Group:      snowclaw.GroupOf(evt),
		Tags:       snowclaw.TagValues(evt, "t"),
		Source:     snowclaw.NpubOf(firstTag(evt, snowclaw.TagSource, evt.PubKey)),
		Model:      firstTag(evt, snowclaw.TagModel, ""),
		Supersedes: snowclaw.TagValues(evt, snowclaw.TagSupersedes),
		CreatedAt:  evt.CreatedAt,
	}
	if pk := snowclaw.LearntFrom(evt); pk != "" {
		mv.LearntFrom = snowclaw.NpubOf(pk)
	}
	if mv.Tier == snowclaw.TierPrivate {
		mv.Person, _ = snowclaw.PersonOf(evt, v.agent)
	}
	if c, err := strconv.ParseFloat(firstTag(evt, snowclaw.TagConfidence, ""), 64); err == nil && c >= 0 && c <= 1 {
		mv.Confidence = c
	}
	if n, err := strconv.Atoi(firstTag(evt, snowclaw.TagVersion, "")); err == nil && n > 0 {
		mv.Version = n
	}
	switch {
	case !snowclaw.IsEncrypted(evt):
		mv.Text, mv.Detail, mv.Context = textOf(evt.Content)
	case v.mayDecrypt(evt):
		// opened with the agent key: the agent holds the other end of
		// every conversation a reader may have decrypted for them
		plain, err := snowclaw.Open(evt, v.secret, v.agent, "")
		mv.Encrypted = err != nil
		if err == nil {
			mv.Text, mv.Detail, mv.Context = textOf(plain)
		}
	default:
		mv.Encrypted = true
	}
	return mv
}

// textOf is what a view shows of a memory's plain content.
func textOf(content string) (text, detail, context string) {
	m := snowclaw.DecodeMemory(content)
	return m.Summary, m.Detail, m.Context
}
