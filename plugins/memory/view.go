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
// person's (snowclaw.Event.Person: the p tag of an event signed by the
// agent or that person), an internal one the owner's. The agent holds the
// other end of every such conversation, so it can decrypt for them.
func (v *viewer) mayDecrypt(evt *snowclaw.Event) bool {
	if v.reader == "" || v.secret == "" {
		return false
	}
	switch evt.Tier {
	case snowclaw.TierPrivate:
		person, ok := evt.Person(v.agent)
		return ok && person == v.reader
	case snowclaw.TierInternal:
		return v.owner != "" && v.reader == v.owner
	}
	return false
}

// view decodes the markers and, when the reader may read it, the text.
func (v *viewer) view(raw *nostr.Event) snowclaw.MemoryView {
	evt := snowclaw.ReadEvent(raw)
	mv := snowclaw.MemoryView{
		ID:         evt.ID,
		Pubkey:     evt.PubKey,
		Topic:      evt.Subject,
		Tier:       evt.Tier,
		Group:      evt.Group,
		Tags:       snowclaw.TagValues(raw, "t"),
		Source:     snowclaw.NpubOf(firstTag(raw, snowclaw.TagSource, evt.PubKey)),
		Model:      firstTag(raw, snowclaw.TagModel, ""),
		Supersedes: snowclaw.TagValues(raw, snowclaw.TagSupersedes),
		CreatedAt:  evt.CreatedAt,
	}
	if pk := snowclaw.LearntFrom(raw); pk != "" {
		mv.LearntFrom = snowclaw.NpubOf(pk)
	}
	if mv.Tier == snowclaw.TierPrivate {
		mv.Person, _ = evt.Person(v.agent)
	}
	if c, err := strconv.ParseFloat(firstTag(raw, snowclaw.TagConfidence, ""), 64); err == nil && c >= 0 && c <= 1 {
		mv.Confidence = c
	}
	if n, err := strconv.Atoi(firstTag(raw, snowclaw.TagVersion, "")); err == nil && n > 0 {
		mv.Version = n
	}
	switch {
	case !evt.Encrypted:
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
